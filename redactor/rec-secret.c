/* rec-secret.c — SECRET: API keys and tokens with published prefixes (OpenAI, Anthropic,
 * GitHub, GitLab, Slack, Stripe, AWS access key ids, Google API keys, Hugging Face, npm,
 * SendGrid, Shopify, DigitalOcean), JSON Web Tokens, PEM private-key blocks, values after a
 * credential keyword ("password: ...", "api_key=..."), and long high-entropy strings. */
#include "hz-recognizers.h"

#include <math.h>
#include <string.h>

static inline gboolean
is_tok_char (char c)
{
  return hz_is_key_char (c);
}

typedef struct {
  const char *prefix;
  int min_tail; /* characters required after the prefix */
} KeyPrefix;



static const KeyPrefix prefixes[] = {
  { "sk-ant-", 20 }, { "sk-proj-", 20 }, { "sk-", 20 }, { "sk_live_", 16 }, { "sk_test_", 16 },
  { "rk_live_", 16 }, { "pk_live_", 16 }, { "whsec_", 16 }, { "ghp_", 30 }, { "gho_", 30 },
  { "ghu_", 30 }, { "ghs_", 30 }, { "ghr_", 30 }, { "github_pat_", 30 }, { "glpat-", 20 },
  { "xoxb-", 20 }, { "xoxp-", 20 }, { "xoxa-", 20 }, { "xoxr-", 20 }, { "xapp-", 20 },
  { "AKIA", 16 }, { "ASIA", 16 }, { "AIza", 35 }, { "ya29.", 20 }, { "hf_", 30 },
  { "npm_", 30 }, { "SG.", 40 }, { "shpat_", 30 }, { "shpss_", 30 }, { "dop_v1_", 40 },
  { "glc_", 30 }, { "pypi-", 50 },
};


static double
entropy (const char *s, gsize n)
{
  int counts[256] = { 0 };
  for (gsize i = 0; i < n; i++)
    counts[(guchar) s[i]]++;
  double h = 0;
  for (int c = 0; c < 256; c++)
    if (counts[c])
      {
        double p = (double) counts[c] / n;
        h -= p * log2 (p);
      }
  return h;
}

static void
find_pem (HzScan *scan)
{
  const char *t = scan->text;
  const char *p = t;
  while ((p = g_strstr_len (p, scan->len - (p - t), "-----BEGIN ")))
    {
      const char *eol = memchr (p, '\n', scan->len - (p - t));
      const char *hdr_end = g_strstr_len (p + 11, (eol ? eol : t + scan->len) - (p + 11), "-----");
      if (!hdr_end)
        {
          p += 11;
          continue;
        }
      g_autofree char *label = g_strndup (p + 11, hdr_end - (p + 11));
      if (!g_str_has_suffix (label, "PRIVATE KEY") && !g_str_has_suffix (label, "PRIVATE KEY BLOCK"))
        {
          p = hdr_end;
          continue;
        }
      g_autofree char *footer = g_strconcat ("-----END ", label, "-----", NULL);
      const char *f = g_strstr_len (hdr_end, scan->len - (hdr_end - t), footer);
      gsize e = f ? (gsize) (f - t) + strlen (footer) : scan->len; /* unterminated: to the end */
      hz_scan_add (scan, p - t, e, HZ_ENTITY_SECRET, 1.0f, HZ_TIER_VALIDATED, "pem-private-key");
      p = t + e;
    }
}

/* JWT: three base64url segments, the first two decoding to JSON objects ("eyJ" = '{"'). */
static gsize
jwt_len (const char *s, gsize n)
{
  if (n < 20 || strncmp (s, "eyJ", 3) != 0)
    return 0;
  gsize p = 0;
  int dots = 0;
  while (p < n && (hz_is_alnum_ascii (s[p]) || s[p] == '-' || s[p] == '_' || s[p] == '.'))
    {
      if (s[p] == '.')
        {
          dots++;
          if (dots == 1 && strncmp (s + p + 1, "eyJ", MIN (3, n - p - 1)) != 0)
            return 0;
        }
      p++;
    }
  while (p > 0 && s[p - 1] == '.')
    p--;
  return dots >= 2 ? p : 0;
}

void
hz_rec_secret (HzScan *scan)
{
  if (!scan->r->enabled[HZ_ENTITY_SECRET])
    return;
  const char *t = scan->text;
  gsize len = scan->len;
  if (scan->has['-'])
    find_pem (scan);
  gsize i = 0;
  while (i < len)
    {
      if (!is_tok_char (t[i]) || (i > 0 && is_tok_char (t[i - 1])))
        {
          i++;
          continue;
        }
      gsize e = i;
      while (e < len && is_tok_char (t[e]))
        e++;
      if (e - i < 20)
        {
          /* every key prefix + tail, JWT and high-entropy string is >= 20 characters */
          i = e;
          continue;
        }
      while (e > i && strchr (".,-/", t[e - 1]))
        e--;
      while (e < len && t[e] == '=' && e > i && is_tok_char (t[e - 1]) && !(e + 1 < len && is_tok_char (t[e + 1])))
        e++; /* base64 padding */
      gsize n = e - i;
      if (n == 0)
        {
          i++;
          continue;
        }
      gsize jl = jwt_len (t + i, n);
      if (jl)
        {
          hz_scan_add (scan, i, i + jl, HZ_ENTITY_SECRET, 1.0f, HZ_TIER_VALIDATED, "jwt");
          i = e;
          continue;
        }
      gboolean found = FALSE;
      /* quick reject: the first byte must start some known prefix */
      static guint8 first_ok[256];
      static guint8 plen[G_N_ELEMENTS (prefixes)];
      static gsize inited = 0;
      if (g_once_init_enter (&inited))
        {
          for (gsize k = 0; k < G_N_ELEMENTS (prefixes); k++)
            {
              first_ok[(guchar) prefixes[k].prefix[0]] = 1;
              plen[k] = (guint8) strlen (prefixes[k].prefix);
            }
          g_once_init_leave (&inited, 1);
        }
      for (gsize k = 0; k < G_N_ELEMENTS (prefixes) && !found && first_ok[(guchar) t[i]]; k++)
        {
          gsize pl = plen[k];
          if (n >= pl + prefixes[k].min_tail && strncmp (t + i, prefixes[k].prefix, pl) == 0)
            {
              gboolean ok = TRUE;
              for (gsize q = i + pl; q < e && ok; q++)
                ok = hz_is_alnum_ascii (t[q]) || t[q] == '_' || t[q] == '-' || t[q] == '.';
              if (prefixes[k].prefix[0] == 'A' && prefixes[k].prefix[1] != 'I')
                for (gsize q = i + pl; q < i + pl + 16 && ok; q++)
                  ok = hz_is_digit (t[q]) || (t[q] >= 'A' && t[q] <= 'Z');
              if (ok)
                {
                  hz_scan_add (scan, i, e, HZ_ENTITY_SECRET, 0.95f, HZ_TIER_VALIDATED, "key-prefix");
                  found = TRUE;
                }
            }
        }
      if (!found && n >= 20 && n <= 4096)
        {
          /* high entropy: letters and digits mixed, no word-like shape */
          int up = 0, lo = 0, dg = 0, dots = 0;
          for (gsize q = i; q < e; q++)
            {
              up += t[q] >= 'A' && t[q] <= 'Z';
              lo += t[q] >= 'a' && t[q] <= 'z';
              dg += hz_is_digit (t[q]);
              dots += t[q] == '.' || t[q] == '/';
            }
          gboolean hex = up + lo + dg == (int) n && (up == 0 || lo == 0) && n >= 32;
          double h = entropy (t + i, n);
          if (dg > 0 && (up + lo) > 0 && dots <= 1
              && ((hex && h >= 3.0) || (up > 0 && lo > 0 && h >= 4.0)))
            hz_scan_add (scan, i, e, HZ_ENTITY_SECRET, 0.7f, HZ_TIER_CONTEXT, "entropy");
        }
      i = e > i ? e : i + 1;
    }
  /* credential keyword followed by ':' or '=' and a value */
  for (guint k = 0; k < scan->n_toks; k++)
    {
      const HzToken *tk = &scan->toks[k];
      if (!hz_tok_in (tk, HZ_W_CRED_KEY))
        continue;
      gsize p = tk->e;
      while (p < len && (t[p] == '"' || t[p] == '\''))
        p++;
      while (p < len && t[p] == ' ')
        p++;
      if (p >= len || (t[p] != ':' && t[p] != '=') )
        {
          if (!(hz_token_is (scan, tk, "bearer") && p > tk->e))
            continue;
        }
      else
        p++;
      while (p < len && (t[p] == ' ' || t[p] == '"' || t[p] == '\''))
        p++;
      gsize vs = p;
      while (p < len && (guchar) t[p] > ' ' && t[p] != '"' && t[p] != '\'' && t[p] != ',' && t[p] != ';')
        p++;
      if (p - vs >= 4)
        hz_scan_add (scan, vs, p, HZ_ENTITY_SECRET, 0.9f, HZ_TIER_PATTERN, "credential-value");
    }
}
