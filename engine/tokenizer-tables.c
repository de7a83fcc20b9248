/* engine/tokenizer-tables.c — hash tables and the merge heap used by the tokenizers.
 * See tokenizer-private.h. Hashing: 64-bit FNV-1a (strings) and a splitmix64 finaliser
 * (pairs); linear probing, load factor <= 1/2 (strings) or 2/3 (pairs). String slots keep
 * 32 bits of the hash so that probing rarely touches the texts themselves. */
#include <string.h>
#include "tokenizer-private.h"

/* Smallest power of two >= n * num / den + 2 (and >= 16). */
static guint32
capacity_for (guint32 n, guint32 num, guint32 den)
{
  guint64 want = (guint64) n * num / den + 2;
  guint32 cap = 16;
  while (cap < want)
    cap <<= 1;
  return cap;
}

static guint64
fnv1a (const char *s, gsize len)
{
  guint64 h = 0xcbf29ce484222325ull;
  for (gsize i = 0; i < len; i++)
    {
      h ^= (guchar) s[i];
      h *= 0x100000001b3ull;
    }
  return h;
}

void
hz_strtab_init (HzStrTab *t, guint32 max_ids)
{
  guint32 cap = capacity_for (max_ids, 2, 1);
  t->slots = g_new0 (HzStrSlot, cap);
  t->mask = cap - 1;
  t->count = 0;
  t->texts = NULL;
  t->lens = NULL;
}

void
hz_strtab_clear (HzStrTab *t)
{
  g_clear_pointer (&t->slots, g_free);
  t->count = 0;
}

int32_t
hz_strtab_lookup (const HzStrTab *t, const char *s, gsize len)
{
  guint64 h = fnv1a (s, len);
  guint32 tag = (guint32) (h >> 32), i = (guint32) h & t->mask;

  for (;;)
    {
      guint32 v = t->slots[i].id1;
      if (v == 0)
        return -1;
      if (t->slots[i].tag == tag && t->lens[v - 1] == len &&
          memcmp (t->texts[v - 1], s, len) == 0)
        return (int32_t) (v - 1);
      i = (i + 1) & t->mask;
    }
}

/* Double the capacity and re-insert every id. */
static void
strtab_grow (HzStrTab *t)
{
  HzStrSlot *old = t->slots;
  guint32 old_cap = t->mask + 1;

  t->slots = g_new0 (HzStrSlot, (gsize) old_cap * 2);
  t->mask = old_cap * 2 - 1;
  for (guint32 k = 0; k < old_cap; k++)
    if (old[k].id1 != 0)
      {
        guint32 id = old[k].id1 - 1;
        guint32 i = (guint32) fnv1a (t->texts[id], t->lens[id]) & t->mask;
        while (t->slots[i].id1 != 0)
          i = (i + 1) & t->mask;
        t->slots[i] = old[k];
      }
  g_free (old);
}

int32_t
hz_strtab_insert (HzStrTab *t, int32_t id)
{
  const char *s = t->texts[id];
  gsize len = t->lens[id];
  guint64 h;
  guint32 tag, i;

  if ((t->count + 1u) * 2u > t->mask + 1u)
    strtab_grow (t);
  h = fnv1a (s, len);
  tag = (guint32) (h >> 32);
  i = (guint32) h & t->mask;
  for (;;)
    {
      guint32 v = t->slots[i].id1;
      if (v == 0)
        {
          t->slots[i].id1 = (guint32) id + 1;
          t->slots[i].tag = tag;
          t->count++;
          return id;
        }
      if (t->slots[i].tag == tag && t->lens[v - 1] == len &&
          memcmp (t->texts[v - 1], s, len) == 0)
        return (int32_t) (v - 1);
      i = (i + 1) & t->mask;
    }
}

static guint64
mix64 (guint64 x)
{
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

void
hz_pairtab_init (HzPairTab *t, guint32 max_entries)
{
  guint32 cap = capacity_for (max_entries, 3, 2);
  t->slots = g_new (HzPairSlot, cap);
  for (guint32 i = 0; i < cap; i++)
    t->slots[i].key = G_MAXUINT64;
  t->mask = cap - 1;
  t->count = 0;
}

void
hz_pairtab_clear (HzPairTab *t)
{
  g_clear_pointer (&t->slots, g_free);
  t->count = 0;
}

void
hz_pairtab_insert (HzPairTab *t, int32_t left, int32_t right, int32_t rank, int32_t result)
{
  guint64 key = ((guint64) (guint32) left << 32) | (guint32) right;
  guint32 i = (guint32) mix64 (key) & t->mask;

  g_return_if_fail ((guint64) (t->count + 1u) * 3u <= (guint64) (t->mask + 1u) * 2u);
  while (t->slots[i].key != G_MAXUINT64)
    {
      if (t->slots[i].key == key)
        return;
      i = (i + 1) & t->mask;
    }
  t->slots[i].key = key;
  t->slots[i].rank = rank;
  t->slots[i].result = result;
  t->count++;
}

gboolean
hz_pairtab_lookup (const HzPairTab *t, int32_t left, int32_t right, int32_t *rank,
                   int32_t *result)
{
  guint64 key = ((guint64) (guint32) left << 32) | (guint32) right;
  guint32 i;

  if (t->slots == NULL || left < 0 || right < 0)
    return FALSE;
  i = (guint32) mix64 (key) & t->mask;
  while (t->slots[i].key != G_MAXUINT64)
    {
      if (t->slots[i].key == key)
        {
          *rank = t->slots[i].rank;
          *result = t->slots[i].result;
          return TRUE;
        }
      i = (i + 1) & t->mask;
    }
  return FALSE;
}

static inline gboolean
bigram_less (const HzBigram *x, const HzBigram *y)
{
  return x->key < y->key || (x->key == y->key && x->left < y->left);
}

void
hz_heap_push (HzHeap *h, const HzBigram *b)
{
  gsize i;

  if (h->n == h->cap)
    {
      h->cap = h->cap ? h->cap * 2 : 64;
      h->v = g_renew (HzBigram, h->v, h->cap);
    }
  i = h->n++;
  while (i > 0)
    {
      gsize p = (i - 1) / 2;
      if (!bigram_less (b, &h->v[p]))
        break;
      h->v[i] = h->v[p];
      i = p;
    }
  h->v[i] = *b;
}

gboolean
hz_heap_pop (HzHeap *h, HzBigram *out)
{
  HzBigram last;
  gsize i = 0;

  if (h->n == 0)
    return FALSE;
  *out = h->v[0];
  last = h->v[--h->n];
  for (;;)
    {
      gsize c = 2 * i + 1;
      if (c >= h->n)
        break;
      if (c + 1 < h->n && bigram_less (&h->v[c + 1], &h->v[c]))
        c++;
      if (!bigram_less (&h->v[c], &last))
        break;
      h->v[i] = h->v[c];
      i = c;
    }
  if (h->n > 0)
    h->v[i] = last;
  return TRUE;
}

void
hz_heap_clear (HzHeap *h)
{
  g_clear_pointer (&h->v, g_free);
  h->n = h->cap = 0;
}
