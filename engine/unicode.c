/* engine/unicode.c — code point helpers for the tokenizers; see unicode.h. */
#include "unicode.h"

guint
hz_unicode_flags (uint32_t cpt)
{
  guint f;

  if (cpt > 0x10FFFF)
    return 0;

  switch (g_unichar_type (cpt))
    {
    case G_UNICODE_DECIMAL_NUMBER:
    case G_UNICODE_LETTER_NUMBER:
    case G_UNICODE_OTHER_NUMBER:
      f = HZ_UCF_NUMBER;
      break;
    case G_UNICODE_LOWERCASE_LETTER:
    case G_UNICODE_MODIFIER_LETTER:
    case G_UNICODE_OTHER_LETTER:
    case G_UNICODE_TITLECASE_LETTER:
    case G_UNICODE_UPPERCASE_LETTER:
      f = HZ_UCF_LETTER;
      break;
    case G_UNICODE_LINE_SEPARATOR:
    case G_UNICODE_PARAGRAPH_SEPARATOR:
    case G_UNICODE_SPACE_SEPARATOR:
      f = HZ_UCF_SEPARATOR;
      break;
    case G_UNICODE_SPACING_MARK:
    case G_UNICODE_ENCLOSING_MARK:
    case G_UNICODE_NON_SPACING_MARK:
      f = HZ_UCF_ACCENT_MARK;
      break;
    case G_UNICODE_CONNECT_PUNCTUATION:
    case G_UNICODE_DASH_PUNCTUATION:
    case G_UNICODE_CLOSE_PUNCTUATION:
    case G_UNICODE_FINAL_PUNCTUATION:
    case G_UNICODE_INITIAL_PUNCTUATION:
    case G_UNICODE_OTHER_PUNCTUATION:
    case G_UNICODE_OPEN_PUNCTUATION:
      f = HZ_UCF_PUNCTUATION;
      break;
    case G_UNICODE_CURRENCY_SYMBOL:
    case G_UNICODE_MODIFIER_SYMBOL:
    case G_UNICODE_MATH_SYMBOL:
    case G_UNICODE_OTHER_SYMBOL:
      f = HZ_UCF_SYMBOL;
      break;
    default: /* Cc Cf Cs Co Cn */
      f = HZ_UCF_CONTROL;
      break;
    }

  /* Unicode White_Space (PropList.txt), the set Python regex's \s matches. */
  if ((cpt >= 0x09 && cpt <= 0x0D) || cpt == 0x20 || cpt == 0x85 || cpt == 0xA0 ||
      cpt == 0x1680 || (cpt >= 0x2000 && cpt <= 0x200A) || cpt == 0x2028 ||
      cpt == 0x2029 || cpt == 0x202F || cpt == 0x205F || cpt == 0x3000)
    f |= HZ_UCF_WHITESPACE;

  return f;
}

uint32_t
hz_unicode_tolower (uint32_t cpt)
{
  return cpt > 0x10FFFF ? cpt : g_unichar_tolower (cpt);
}

/* One code point at s[*off] (len bytes in total), following llama.cpp's
 * unicode_cpt_from_utf8: returns FALSE for a malformed sequence. */
static gboolean
decode_one (const guchar *s, gsize len, gsize *off, uint32_t *out)
{
  gsize o = *off;
  guchar c = s[o];

  if (!(c & 0x80))
    {
      *out = c;
      *off = o + 1;
      return TRUE;
    }
  if (!(c & 0x40))
    return FALSE;
  if (!(c & 0x20))
    {
      if (o + 1 >= len || (s[o + 1] & 0xC0) != 0x80)
        return FALSE;
      *out = ((uint32_t) (c & 0x1F) << 6) | (s[o + 1] & 0x3F);
      *off = o + 2;
      return TRUE;
    }
  if (!(c & 0x10))
    {
      if (o + 2 >= len || (s[o + 1] & 0xC0) != 0x80 || (s[o + 2] & 0xC0) != 0x80)
        return FALSE;
      *out = ((uint32_t) (c & 0x0F) << 12) | ((uint32_t) (s[o + 1] & 0x3F) << 6) |
             (s[o + 2] & 0x3F);
      *off = o + 3;
      return TRUE;
    }
  if (!(c & 0x08))
    {
      if (o + 3 >= len || (s[o + 1] & 0xC0) != 0x80 || (s[o + 2] & 0xC0) != 0x80 ||
          (s[o + 3] & 0xC0) != 0x80)
        return FALSE;
      *out = ((uint32_t) (c & 0x07) << 18) | ((uint32_t) (s[o + 1] & 0x3F) << 12) |
             ((uint32_t) (s[o + 2] & 0x3F) << 6) | (s[o + 3] & 0x3F);
      if (*out > 0x10FFFF)
        return FALSE;
      *off = o + 4;
      return TRUE;
    }
  return FALSE;
}

gsize
hz_utf8_decode_lenient (const char *s, gsize len, GArray *out)
{
  const guchar *u = (const guchar *) s;
  gsize off = 0, n = 0;

  while (off < len)
    {
      uint32_t cpt;
      if (!decode_one (u, len, &off, &cpt))
        {
          cpt = 0xFFFD;
          off++;
        }
      g_array_append_val (out, cpt);
      n++;
    }
  return n;
}

int
hz_utf8_encode (uint32_t cpt, char out[4])
{
  if (cpt <= 0x7F)
    {
      out[0] = (char) cpt;
      return 1;
    }
  if (cpt <= 0x7FF)
    {
      out[0] = (char) (0xC0 | (cpt >> 6));
      out[1] = (char) (0x80 | (cpt & 0x3F));
      return 2;
    }
  if (cpt > 0x10FFFF)
    cpt = 0xFFFD;
  if (cpt <= 0xFFFF)
    {
      out[0] = (char) (0xE0 | (cpt >> 12));
      out[1] = (char) (0x80 | ((cpt >> 6) & 0x3F));
      out[2] = (char) (0x80 | (cpt & 0x3F));
      return 3;
    }
  out[0] = (char) (0xF0 | (cpt >> 18));
  out[1] = (char) (0x80 | ((cpt >> 12) & 0x3F));
  out[2] = (char) (0x80 | ((cpt >> 6) & 0x3F));
  out[3] = (char) (0x80 | (cpt & 0x3F));
  return 4;
}

/* bytes_to_unicode() of openai/gpt-2 encoder.py: bytes '!'..'~', 0xA1..0xAC and
 * 0xAE..0xFF stand for themselves; the remaining bytes, in increasing order, get
 * U+0100, U+0101, ... */
static uint32_t gpt2_b2c[256];
static gint16   gpt2_c2b[0x144];

static void
gpt2_tables_init (void)
{
  static gsize done = 0;

  if (g_once_init_enter (&done))
    {
      uint32_t next = 256;
      for (int i = 0; i < (int) G_N_ELEMENTS (gpt2_c2b); i++)
        gpt2_c2b[i] = -1;
      for (int b = 0; b < 256; b++)
        {
          gboolean self = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) ||
                          (b >= 0xAE && b <= 0xFF);
          gpt2_b2c[b] = self ? (uint32_t) b : next++;
          gpt2_c2b[gpt2_b2c[b]] = (gint16) b;
        }
      g_once_init_leave (&done, 1);
    }
}

uint32_t
hz_gpt2_byte_to_cpt (guint8 b)
{
  gpt2_tables_init ();
  return gpt2_b2c[b];
}

int
hz_gpt2_cpt_to_byte (uint32_t cpt)
{
  gpt2_tables_init ();
  return cpt < G_N_ELEMENTS (gpt2_c2b) ? gpt2_c2b[cpt] : -1;
}

static gboolean
gc_is_mark (uint32_t c)
{
  GUnicodeType t = g_unichar_type (c);
  return t == G_UNICODE_NON_SPACING_MARK || t == G_UNICODE_SPACING_MARK ||
         t == G_UNICODE_ENCLOSING_MARK;
}

static gboolean
nfc_breaks (uint32_t c)
{
  return c == 0 || (c >= 0xD800 && c <= 0xDFFF) || c > 0x10FFFF;
}

/* A code point before which NFC never acts across: a starter (combining class 0) that NFC
 * leaves as it is (no decomposition, or one that composes back to it: no singleton, no
 * composition exclusion) and that composes with nothing before it. The second code points
 * of canonical compositions are marks (category M) and the Hangul vowel and trailing jamo
 * (U+1161-U+1175, U+11A8-U+11C2); nothing below U+0300 is either. */
static gboolean
nfc_boundary (uint32_t c)
{
  gunichar a, b, r;
  if (c < 0x300)
    return TRUE;
  if (nfc_breaks (c) || g_unichar_combining_class (c) != 0 ||
      (gc_is_mark (c)) || (c >= 0x1161 && c <= 0x1175) || (c >= 0x11A8 && c <= 0x11C2))
    return FALSE;
  if (!g_unichar_decompose (c, &a, &b))
    return TRUE;
  return b != 0 && g_unichar_compose (a, b, &r) && r == c;
}

/* NFC of cpts[from, to) appended to `out` (no NUL or surrogate inside). */
static void
nfc_run (const uint32_t *cpts, gsize from, gsize to, GString *scratch, GArray *out)
{
  g_string_truncate (scratch, 0);
  for (gsize i = from; i < to; i++)
    g_string_append_unichar (scratch, cpts[i]);
  g_autofree char *norm = g_utf8_normalize (scratch->str, (gssize) scratch->len,
                                            G_NORMALIZE_NFC);
  for (const char *p = norm; p && *p; p = g_utf8_next_char (p))
    {
      uint32_t c = g_utf8_get_char (p);
      g_array_append_val (out, c);
    }
}

/* Documented in unicode.h. The text is cut before every nfc_boundary() code point: NFC
 * never acts across such a cut, so only the stretches holding something else are
 * normalized (by GLib), and the rest is copied. */
void
hz_nfc_normalize (GArray *cpts)
{
  const uint32_t *in = (const uint32_t *) (void *) cpts->data;
  g_autoptr(GArray) out = NULL;
  g_autoptr(GString) scratch = NULL;
  gsize n = cpts->len, seg = 0;
  gboolean dirty = FALSE, any = FALSE;

  for (gsize k = 0; k < n && !any; k++)
    any = in[k] >= 0x300;
  if (!any)
    return;
  out = g_array_sized_new (FALSE, FALSE, sizeof (uint32_t), n);
  scratch = g_string_new (NULL);
  for (gsize i = 0; i <= n; i++)
    {
      gboolean cut = i == n || nfc_breaks (in[i]) || nfc_boundary (in[i]);
      if (cut)
        {
          if (dirty)
            nfc_run (in, seg, i, scratch, out);
          else
            g_array_append_vals (out, in + seg, i - seg);
          seg = i;
          dirty = FALSE;
          if (i < n && nfc_breaks (in[i]))
            {
              g_array_append_val (out, in[i]);   /* kept as it is */
              seg = i + 1;
            }
        }
      else
        dirty = TRUE;
    }
  g_array_set_size (cpts, 0);
  g_array_append_vals (cpts, out->data, out->len);
}
