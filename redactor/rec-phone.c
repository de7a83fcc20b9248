/* rec-phone.c — PHONE: international (+CC) and national numbers written as digit groups
 * separated by single spaces, hyphens, dots or parentheses, with an optional extension.
 * Grouped numbers of 10-15 digits are accepted on shape; shorter grouped or ungrouped
 * numbers need a whole-word context cue ("phone", "call", "tel", ...). Numbers that start
 * with a calendar date, or ungrouped 10-digit values starting with 1 (epoch seconds, not a
 * NANP number), are rejected. */
#include "hz-recognizers.h"

static const char *const phone_context[] = {
  "phone", "telephone", "tel", "mobile", "cell", "cellphone", "call", "calling", "fax", "number",
  "contact", "reach", "text", "whatsapp", "sms", "ph", "mob", "desk", "landline", "dial", "ring",
  "phones", "numbers", "no", "nr", "hotline", NULL,
};

/* cue words of the identifier recognizers (card and SSN cues live here too so that all
 * identifier cue lists are registered in one table) */
static const char *const card_context[] = { "card", "credit", "debit", "visa", "mastercard",
                                            "amex", "cc", "pan", NULL };
static const char *const ssn_context[] = { "ssn", "ssns", "social", "security", "ss#", "sin",
                                           "taxpayer", "tin", NULL };
static const char *const cred_keys[] = {
  "password", "passwd", "pwd", "pass", "passphrase", "secret", "token", "apikey", "api_key",
  "api-key", "access_key", "secret_key", "client_secret", "auth_token", "access_token",
  "private_key", "bearer", NULL,
};

const HzWordList hz_ident_lists[] = {
  { HZ_W_PHONE_CUE, phone_context },
  { HZ_W_CARD_CUE, card_context },
  { HZ_W_SSN_CUE, ssn_context },
  { HZ_W_CRED_KEY, cred_keys },
  { 0, NULL },
};

typedef struct {
  int digits, groups, parens, max_group, first_group;
  gboolean plus;
  char sep;       /* first separator seen */
  gboolean mixed; /* several separator kinds (parens excluded) */
  gboolean inner_single; /* a group of one digit after the first (versions: "120.0.6099.109") */
} Shape;

/* An ISBN at bytes [s, *e) (token ti): after an "ISBN" cue whatever its digits, or, without
 * a phone cue before it, a valid ISBN-13 (978/979 prefix and check digit) or a valid ISBN-10
 * written in four groups whose last is its check character ("0-306-40615-2",
 * "0-8044-2957-X"), a shape no phone number has. A check character 'X' after the digits is
 * taken into *e. */
static gboolean
isbn_at (const HzScan *scan, guint ti, gsize s, gboolean phone_cue, gsize *e)
{
  const char *t = scan->text;
  gsize end = *e;
  if (end + 1 < scan->len && (t[end] == '-' || t[end] == ' ') && (t[end + 1] == 'X' || t[end + 1] == 'x')
      && !hz_alnum_at (t, scan->len, end + 2))
    end += 2;
  int digits = 0, groups = 1;
  for (gsize q = s; q < end; q++)
    {
      digits += hz_is_digit (t[q]);
      groups += t[q] == '-' || t[q] == ' ';
    }
  gboolean isbn = hz_isbn_cue_before (scan, ti)
                  || (!phone_cue && hz_validate_isbn (t + s, end - s)
                      && (digits == 13 || (groups == 4 && (t[end - 2] == '-' || t[end - 2] == ' '))));
  if (isbn)
    *e = end;
  return isbn;
}

/* A field cue for another kind of number among the 4 tokens before token ti: a postcode
 * ("ZIP: 75534-030") or a document number ("driver's license number is 6940579"). */
static gboolean
other_number_cue (const HzScan *scan, guint ti)
{
  static const char *const docs[] = { "license", "licence", "passport", "permit", "policy",
                                      "invoice", "order", "tracking", "account", "routing", NULL };
  if (hz_context_before (scan, ti, 4, HZ_W_ZIP_CUE))
    return TRUE;
  for (guint k = ti >= 4 ? ti - 4 : 0; k < ti; k++)
    if (hz_token_among (scan, &scan->toks[k], docs))
      return TRUE;
  return FALSE;
}

void
hz_rec_phone (HzScan *scan)
{
  if (!scan->r->enabled[HZ_ENTITY_PHONE] || !hz_scan_has_digits (scan))
    return;
  const char *t = scan->text;
  gsize len = scan->len, i = 0;
  while (i < len)
    {
      char c = t[i];
      if (!(hz_is_digit (c) || c == '+' || c == '(') || hz_alnum_before (t, i)
          || (i > 0 && (t[i - 1] == '.' || t[i - 1] == '-' || t[i - 1] == '/' || t[i - 1] == '+')))
        {
          i++;
          continue;
        }
      Shape sh = { 0 };
      gsize p = i;
      if (t[p] == '+')
        {
          sh.plus = TRUE;
          p++;
          if (p >= len || !(hz_is_digit (t[p]) || t[p] == '('))
            {
              i = p;
              continue;
            }
        }
      gsize last_digit_end = 0;
      while (p < len)
        {
          if (t[p] == '(')
            {
              gsize q = p + 1, gs = q;
              while (q < len && hz_is_digit (t[q]))
                q++;
              if (q == gs || q >= len || t[q] != ')' || q - gs > 5)
                break;
              sh.digits += q - gs;
              sh.groups++;
              sh.parens++;
              if (sh.groups == 1)
                sh.first_group = q - gs;
              p = q + 1;
              last_digit_end = p;
              if (p < len && t[p] == ' ')
                p++;
              continue;
            }
          if (!hz_is_digit (t[p]))
            break;
          gsize gs = p;
          while (p < len && hz_is_digit (t[p]))
            p++;
          int gl = p - gs;
          sh.digits += gl;
          sh.groups++;
          if (sh.groups == 1)
            sh.first_group = gl;
          sh.max_group = MAX (sh.max_group, gl);
          sh.inner_single = sh.inner_single || (gl == 1 && sh.groups > 1);
          last_digit_end = p;
          if (p + 1 < len && (t[p] == ' ' || t[p] == '-' || t[p] == '.')
              && (hz_is_digit (t[p + 1]) || t[p + 1] == '('))
            {
              if (sh.sep && sh.sep != t[p])
                sh.mixed = TRUE;
              if (!sh.sep)
                sh.sep = t[p];
              p++;
            }
          else if (p + 2 < len && t[p] == ' ' && t[p + 1] == '-' && t[p + 2] == ' ')
            p += 3;
          else
            break;
          if (sh.digits > 15)
            break;
        }
      gsize e = last_digit_end;
      if (e <= i || sh.digits > 15 || sh.digits < 7
          || (e + 1 < len && (t[e] == '.' || t[e] == '-') && hz_is_digit (t[e + 1])))
        {
          i = MAX (p, i + 1);
          continue;
        }
      /* extension: x123, ext. 123 */
      gsize x = e;
      if (x < len && t[x] == ' ')
        x++;
      if (x + 1 < len && (t[x] == 'x' || t[x] == 'X') && hz_is_digit (t[x + 1]))
        {
          x++;
          while (x < len && hz_is_digit (t[x]))
            x++;
          if (!hz_alnum_at (t, len, x))
            e = x;
        }
      else if (x + 4 < len && g_ascii_strncasecmp (t + x, "ext", 3) == 0)
        {
          gsize q = x + 3;
          if (t[q] == '.')
            q++;
          if (q < len && t[q] == ' ')
            q++;
          gsize ds = q;
          while (q < len && hz_is_digit (t[q]))
            q++;
          if (q > ds && !hz_alnum_at (t, len, q))
            e = q;
        }
      if (hz_alnum_at (t, len, e))
        {
          i = MAX (p, i + 1);
          continue;
        }
      guint ti = hz_token_at_or_after (scan, i);
      gboolean ctx = hz_context_before (scan, ti, 4, HZ_W_PHONE_CUE);
      float score = 0;
      if (hz_date_prefix_len (t + i, e - i) > 0 && !sh.plus)
        score = 0;
      else if (!sh.plus && !sh.parens && (other_number_cue (scan, ti) || hz_form_number_before (scan, ti)))
        score = 0; /* a postcode, a document's or a form's number ("OMB No. 1545-0008") */
      else if (!sh.plus && !sh.parens && isbn_at (scan, ti, i, ctx, &e))
        score = 0;
      else if (sh.sep == '.' && !sh.mixed && !sh.plus && !sh.parens
               && (sh.inner_single || hz_number_is_version (scan, i)))
        score = 0; /* a version: "Chrome 120.0.6099.109", "4.19.0.1234" */
      else if (sh.sep == '.' && !sh.mixed && sh.groups == 4 && sh.max_group <= 3 && !sh.plus)
        score = 0; /* dotted quad: an IPv4 address (or an invalid one), not a phone */
      else if (sh.plus && sh.digits >= 8)
        score = 0.9f;
      else if (sh.parens && sh.groups >= 3)
        score = 0.85f;
      else if (sh.groups >= 2 && sh.digits >= 10 && !sh.mixed)
        score = 0.75f;
      else if (sh.groups >= 2 && sh.digits >= 7 && sh.first_group <= 5
               && !(sh.groups == 3 && sh.sep == '-' && sh.digits == 9 && sh.first_group == 3))
        {
          /* short grouped numbers: not a house number before a street name */
          guint after = hz_token_at_or_after (scan, e);
          gboolean street = after < scan->n_toks && (scan->toks[after].flags & (HZ_TOK_CAP | HZ_TOK_UPPER))
                            && !ctx && scan->toks[after].s <= e + 2;
          score = street ? 0 : (ctx ? 0.8f : 0.5f);
        }
      else if (sh.groups == 1 && (sh.digits == 10 || sh.digits == 11) && (t[i] != '1' || sh.digits == 11))
        score = ctx ? 0.8f : 0.45f;
      else if (sh.groups == 1 && sh.digits >= 7 && ctx)
        score = 0.6f;
      if (score > 0)
        hz_scan_add (scan, i, e, HZ_ENTITY_PHONE, score, HZ_TIER_PATTERN, "phone");
      i = MAX (e, i + 1);
    }
}
