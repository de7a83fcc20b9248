/* hz-scrub.c — replacing spans: type masks, numbered placeholders and pseudonyms, all
 * consistent within one HzScrubber (one conversation). Pseudonyms use reserved ranges where
 * they exist (example.com/.org of RFC 2606, 192.0.2.0/24 of RFC 5737, 2001:db8::/32 of
 * RFC 3849, locally administered MAC addresses) and otherwise keep the shape of the
 * original (digits stay digits, separators and letter case stay); fake national ids keep
 * the shape and fail their check digit, so they are never a real person's number.
 * hz_redact_text() (analyze, then scrub) is here too: the scrubber sits above the analysis. */
#include "hz-redact-private.h"

#include <string.h>

struct _HzScrubber {
  HzScrubMode mode;
  guint64 seed;
  guint counters[HZ_ENTITY_N_TYPES];
  GHashTable *forward;  /* "TYPE\x1f" + lower-case surface -> replacement */
  GHashTable *reverse;  /* replacement -> original surface */
};

static const char *const fake_given[] = {
  "Alex", "Robin", "Sam", "Jordan", "Taylor", "Morgan", "Casey", "Jamie", "Riley", "Avery",
  "Quinn", "Rowan", "Elliot", "Hayden", "Parker", "Reese", "Dana", "Kendall", "Logan", "Skyler",
};
static const char *const fake_sur[] = {
  "Smith", "Lee", "Garcia", "Novak", "Jensen", "Silva", "Weber", "Kowalski", "Moreau", "Rossi",
  "Tanaka", "Okafor", "Larsen", "Dubois", "Fischer", "Costa", "Horvat", "Nilsson", "Brooks", "Ward",
};
static const char *const fake_places[] = {
  "Springfield", "Riverton", "Fairview", "Lakewood", "Greenville", "Oakdale", "Milford", "Ashby",
};
static const char *const fake_streets[] = {
  "12 Elm Street", "48 Oak Avenue", "7 Mill Lane", "230 Pine Road", "5 Station Road", "91 Park Drive",
};

HzScrubber *
hz_scrubber_new (HzScrubMode mode, guint64 seed)
{
  HzScrubber *s = g_new0 (HzScrubber, 1);
  s->mode = mode;
  s->seed = seed;
  s->forward = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  s->reverse = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  return s;
}

void
hz_scrubber_free (HzScrubber *self)
{
  if (!self)
    return;
  g_hash_table_destroy (self->forward);
  g_hash_table_destroy (self->reverse);
  g_free (self);
}

/* splitmix64 */
static guint64
mix (guint64 *state)
{
  guint64 z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static void
apply_case (GString *out, gsize from, const char *orig, gsize n)
{
  gboolean has_lower = FALSE, has_upper = FALSE;
  for (gsize i = 0; i < n; i++)
    {
      has_lower |= g_ascii_islower (orig[i]);
      has_upper |= g_ascii_isupper (orig[i]);
    }
  for (gsize i = from; i < out->len; i++)
    {
      if (has_upper && !has_lower)
        out->str[i] = g_ascii_toupper (out->str[i]);
      else if (has_lower && !has_upper)
        out->str[i] = g_ascii_tolower (out->str[i]);
    }
}

/* Replace digits (and letters, for IBAN) keeping every other character. */
static void
reshape (GString *out, const char *orig, gsize n, guint64 *st, gboolean letters)
{
  for (gsize i = 0; i < n; i++)
    {
      char c = orig[i];
      if (hz_is_digit (c))
        g_string_append_c (out, '0' + (char) (mix (st) % 10));
      else if (letters && hz_is_alpha_ascii (c))
        g_string_append_c (out, (g_ascii_isupper (c) ? 'A' : 'a') + (char) (mix (st) % 26));
      else
        g_string_append_c (out, c);
    }
}

static void
fix_luhn (GString *out, gsize from)
{
  /* last digit: make the whole number Luhn-valid */
  gssize last = -1;
  for (gsize i = from; i < out->len; i++)
    if (hz_is_digit (out->str[i]))
      last = i;
  if (last < 0)
    return;
  for (int d = 0; d < 10; d++)
    {
      out->str[last] = '0' + d;
      if (hz_validate_luhn (out->str + from, out->len - from))
        return;
    }
}

static void
fix_iban (GString *out, gsize from)
{
  char buf[40];
  gsize m = 0;
  for (gsize i = from; i < out->len && m < sizeof buf; i++)
    if (out->str[i] != ' ')
      buf[m++] = g_ascii_toupper (out->str[i]);
  if (m < 5)
    return;
  /* ISO 7064 mod 97-10 with the check digits set to 00: check = 98 - remainder */
  unsigned rem = 0;
  for (gsize k = 0; k < m; k++)
    {
      char c = k < m - 4 ? buf[k + 4] : (k < m - 2 ? buf[k - (m - 4)] : '0');
      rem = hz_is_digit (c) ? (rem * 10 + (unsigned) (c - '0')) % 97 : (rem * 100 + (unsigned) (c - 'A' + 10)) % 97;
    }
  unsigned check = 98 - rem;
  /* the check digits are the 3rd and 4th non-space characters */
  int seen = 0;
  for (gsize i = from; i < out->len; i++)
    if (out->str[i] != ' ')
      {
        if (seen == 2)
          out->str[i] = '0' + check / 10;
        else if (seen == 3)
          {
            out->str[i] = '0' + check % 10;
            break;
          }
        seen++;
      }
}

/* TRUE when s[0..n) could be a real person's number: a valid national id of any format, or
 * a valid US SSN written AAA-GG-SSSS, AAA GG SSSS or as 9 digits (a fake ITIN must not be a
 * real SSN, nor a fake SSN a real ITIN) */
static gboolean
fake_is_real (const char *s, gsize n)
{
  if (hz_validate_national_id (s, n))
    return TRUE;
  if (n != 9 && n != 11)
    return FALSE;
  char d[9];
  gsize k = 0;
  for (gsize i = 0; i < n; i++)
    {
      if (n == 11 && (i == 3 || i == 6))
        {
          if (s[i] != '-' && s[i] != ' ')
            return FALSE;
        }
      else if (g_ascii_isdigit (s[i]))
        d[k++] = s[i];
      else
        return FALSE;
    }
  return hz_validate_us_ssn ((d[0] - '0') * 100 + (d[1] - '0') * 10 + (d[2] - '0'), (d[3] - '0') * 10 + (d[4] - '0'),
                             (d[5] - '0') * 1000 + (d[6] - '0') * 100 + (d[7] - '0') * 10 + (d[8] - '0'));
}

/* Make the national id in out->str[from..] fail its format's check (fake_is_real()):
 * from the last character backwards, try the other digits (or letters) in each place and
 * keep the first that fails. A change of one character makes every check of rec-natid.c
 * fail for most values (a check digit accepts one of ten), and the range checks (US ITIN
 * groups, dates) fail for some value of an earlier place. The one shape where no single
 * change does it is the SSN's (a change of the area to 9xx makes an SSN an ITIN and back):
 * there area 9xx with group 89, neither an SSN nor an ITIN (IRS ITIN groups 50-65, 70-88,
 * 90-92, 94-99). So this ends with an invalid number of the same shape. */
static void
break_natid (GString *out, gsize from)
{
  for (gsize i = out->len; i-- > from && fake_is_real (out->str + from, out->len - from);)
    {
      char c = out->str[i];
      int span = hz_is_digit (c) ? 10 : g_ascii_isupper (c) || g_ascii_islower (c) ? 26 : 0;
      char base = hz_is_digit (c) ? '0' : g_ascii_isupper (c) ? 'A' : 'a';
      for (int k = 1; k < span; k++)
        {
          out->str[i] = base + (char) ((c - base + k) % span);
          if (!fake_is_real (out->str + from, out->len - from))
            return;
        }
      out->str[i] = c;
    }
  gsize n = out->len - from, g = n == 11 ? 4 : 3;
  if ((n == 11 || n == 9) && fake_is_real (out->str + from, n))
    {
      out->str[from] = '9';
      out->str[from + g] = '8';
      out->str[from + g + 1] = '9';
    }
}

static char *
pseudonym (HzScrubber *self, HzEntityType type, const char *orig, gsize n, const char *key, guint num)
{
  guint64 st = self->seed ^ g_str_hash (key) ^ ((guint64) g_str_hash (key + 1) << 32);
  GString *out = g_string_new (NULL);
  switch (type)
    {
    case HZ_ENTITY_PERSON:
      {
        gboolean two = memchr (orig, ' ', n) != NULL;
        g_string_append (out, fake_given[mix (&st) % G_N_ELEMENTS (fake_given)]);
        if (two)
          {
            g_string_append_c (out, ' ');
            g_string_append (out, fake_sur[mix (&st) % G_N_ELEMENTS (fake_sur)]);
          }
        apply_case (out, 0, orig, n);
        break;
      }
    case HZ_ENTITY_EMAIL:
      g_string_append_printf (out, "%s.%s%u@example.com", fake_given[mix (&st) % G_N_ELEMENTS (fake_given)],
                              fake_sur[mix (&st) % G_N_ELEMENTS (fake_sur)], num);
      apply_case (out, 0, "lower", 5);
      break;
    case HZ_ENTITY_URL:
      g_string_append_printf (out, "https://example.org/%u", num);
      break;
    case HZ_ENTITY_IP_ADDRESS:
      if (memchr (orig, ':', n))
        g_string_append_printf (out, "2001:db8::%x", num);
      else
        g_string_append_printf (out, "192.0.2.%u", num % 254 + 1);
      break;
    case HZ_ENTITY_MAC_ADDRESS:
      g_string_append_printf (out, "02:00:00:%02x:%02x:%02x", (num >> 16) & 0xff, (num >> 8) & 0xff, num & 0xff);
      break;
    case HZ_ENTITY_CREDIT_CARD:
      g_string_append_c (out, '4'); /* a Visa-shaped test number */
      reshape (out, orig + 1, n - 1, &st, FALSE);
      fix_luhn (out, 0);
      break;
    case HZ_ENTITY_IBAN:
      g_string_append_len (out, orig, MIN (n, 2));
      if (n > 2)
        reshape (out, orig + 2, n - 2, &st, TRUE);
      fix_iban (out, 0);
      break;
    case HZ_ENTITY_PHONE:
    case HZ_ENTITY_US_SSN:
      reshape (out, orig, n, &st, FALSE);
      if (type == HZ_ENTITY_US_SSN)
        {
          out->str[0] = '9'; /* area 9xx is never issued as an SSN */
          break_natid (out, 0); /* and not a valid ITIN either (its group decides) */
        }
      break;
    case HZ_ENTITY_NATIONAL_ID:
      /* same shape (separators kept, letters stay letters in their case, digits stay
       * digits) but never a valid number of its format, so that a fake can never be a real
       * person's number: its check digit (or range) is made to fail */
      reshape (out, orig, n, &st, TRUE);
      break_natid (out, 0);
      break;
    case HZ_ENTITY_LOCATION:
      g_string_append (out, fake_places[mix (&st) % G_N_ELEMENTS (fake_places)]);
      apply_case (out, 0, orig, n);
      break;
    case HZ_ENTITY_STREET_ADDRESS:
      g_string_append (out, fake_streets[mix (&st) % G_N_ELEMENTS (fake_streets)]);
      break;
    default: /* DATE_TIME, SECRET: no realistic fake is safe; numbered placeholder */
      g_string_append_printf (out, "[%s_%u]", hz_entity_type_name (type), num);
      break;
    }
  return g_string_free (out, FALSE);
}

/* Key of the mapping of `orig` (n bytes) as `type`: the type's name, 0x1F, and the surface
 * in lower case; an identifier written with other separators is the same identifier, so
 * for card, phone, IBAN, SSN, national id and MAC address numbers only the letters and
 * digits count ("86 095 742 719" = "86095742719", "4111-1111-..." = "4111 1111 ..."), and
 * a phone number's international prefix "+" or "00" does not, nor the country code 1 of an
 * 11-digit North American number ("+1 (212) 555-0143" = "212-555-0143"; ITU-T E.164). */
static char *
mapping_key (HzEntityType type, const char *orig, gsize n)
{
  g_autofree char *low = hz_lower_dup (orig, n);
  gboolean ident = type == HZ_ENTITY_CREDIT_CARD || type == HZ_ENTITY_PHONE || type == HZ_ENTITY_IBAN
                   || type == HZ_ENTITY_US_SSN || type == HZ_ENTITY_NATIONAL_ID || type == HZ_ENTITY_MAC_ADDRESS;
  const char *k = low;
  if (ident)
    {
      gsize w = 0;
      for (gsize i = 0; low[i]; i++)
        if (g_ascii_isalnum (low[i]))
          low[w++] = low[i];
      low[w] = '\0';
      if (type == HZ_ENTITY_PHONE && w > 2 && low[0] == '0' && low[1] == '0')
        k += 2, w -= 2;
      if (type == HZ_ENTITY_PHONE && w == 11 && k[0] == '1')
        k++;
    }
  return g_strdup_printf ("%s\x1f%s", hz_entity_type_name (type), k);
}

static const char *
replacement_for (HzScrubber *self, HzEntityType type, const char *orig, gsize n)
{
  g_autofree char *key = mapping_key (type, orig, n);
  const char *hit = g_hash_table_lookup (self->forward, key);
  if (hit)
    return hit;
  guint num = ++self->counters[type];
  char *rep;
  if (self->mode == HZ_SCRUB_NUMBERED)
    rep = g_strdup_printf ("[%s_%u]", hz_entity_type_name (type), num);
  else
    {
      rep = pseudonym (self, type, orig, n, key, num);
      /* two originals must never share a pseudonym */
      while (g_hash_table_contains (self->reverse, rep))
        {
          char *r2 = g_strdup_printf ("%s %u", rep, num);
          g_free (rep);
          rep = r2;
        }
    }
  g_hash_table_insert (self->reverse, g_strdup (rep), g_strndup (orig, n));
  g_hash_table_insert (self->forward, g_steal_pointer (&key), rep);
  return rep;
}

char *
hz_scrubber_scrub (HzScrubber *self, const HzRedaction *redaction)
{
  g_return_val_if_fail (self != NULL && redaction != NULL, NULL);
  GString *out = g_string_sized_new (redaction->len + 16);
  gsize pos = 0;
  for (guint i = 0; i < redaction->n_spans; i++)
    {
      const HzSpan *sp = &redaction->spans[i];
      if (sp->start_byte < pos || sp->end_byte > redaction->len)
        continue; /* never produced by the analyzer; ignore malformed input */
      g_string_append_len (out, redaction->text + pos, sp->start_byte - pos);
      const char *orig = redaction->text + sp->start_byte;
      gsize n = sp->end_byte - sp->start_byte;
      if (self->mode == HZ_SCRUB_MASK)
        {
          g_string_append_printf (out, "[%s]", hz_entity_type_name (sp->type));
        }
      else
        g_string_append (out, replacement_for (self, sp->type, orig, n));
      pos = sp->end_byte;
    }
  g_string_append_len (out, redaction->text + pos, redaction->len - pos);
  return g_string_free (out, FALSE);
}

char *
hz_redact_text (const HzRedactor *self, const char *text, gssize len, HzScrubMode mode,
                GError **error)
{
  HzRedaction *r = hz_redactor_analyze (self, text, len, HZ_REDACT_UTF8_REPLACE, error);
  if (!r)
    return NULL;
  HzScrubber *sc = hz_scrubber_new (mode, 0);
  char *out = hz_scrubber_scrub (sc, r);
  hz_scrubber_free (sc);
  hz_redaction_free (r);
  return out;
}

const char *
hz_scrubber_lookup (HzScrubber *self, const char *replacement)
{
  g_return_val_if_fail (self != NULL && replacement != NULL, NULL);
  if (self->mode == HZ_SCRUB_MASK)
    return NULL; /* masks are not reversible */
  return g_hash_table_lookup (self->reverse, replacement);
}

gboolean
hz_scrubber_add_mapping (HzScrubber *self, HzEntityType type, const char *original,
                         const char *replacement)
{
  g_return_val_if_fail (self != NULL && original != NULL && replacement != NULL, FALSE);
  if (self->mode == HZ_SCRUB_MASK || (int) type <= 0 || type >= HZ_ENTITY_N_TYPES)
    return FALSE;
  if (g_hash_table_contains (self->reverse, replacement))
    return FALSE;
  char *key = mapping_key (type, original, strlen (original));
  if (g_hash_table_contains (self->forward, key))
    {
      g_free (key);
      return FALSE;
    }
  /* keep numbering above every placeholder already handed out: "[PERSON_7]" -> 7 */
  const char *name = hz_entity_type_name (type);
  gsize nl = strlen (name);
  if (replacement[0] == '[' && strncmp (replacement + 1, name, nl) == 0 && replacement[nl + 1] == '_')
    {
      guint64 num = g_ascii_strtoull (replacement + nl + 2, NULL, 10);
      if (num > self->counters[type] && num < G_MAXUINT)
        self->counters[type] = (guint) num;
    }
  else
    self->counters[type]++;
  g_hash_table_insert (self->reverse, g_strdup (replacement), g_strdup (original));
  g_hash_table_insert (self->forward, key, g_strdup (replacement));
  return TRUE;
}

void
hz_scrubber_foreach_mapping (HzScrubber *self, HzScrubMappingFunc func, gpointer user_data)
{
  g_return_if_fail (self != NULL && func != NULL);
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init (&it, self->forward);
  while (g_hash_table_iter_next (&it, &k, &v))
    {
      const char *key = k, *sep = strchr (key, '\x1f');
      g_autofree char *tname = g_strndup (key, sep ? (gsize) (sep - key) : strlen (key));
      const char *orig = g_hash_table_lookup (self->reverse, v);
      func (hz_entity_type_from_name (tname), orig ? orig : "", v, user_data);
    }
}
