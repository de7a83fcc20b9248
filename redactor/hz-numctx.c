/* hz-numctx.c — the contexts that make a number something other than personal data: a
 * version or section number ("version 10.7.31.9", "kernel 6.1.0.21", "§ 14.9.1.2",
 * "Chrome 120.0.6099.109", "Chrome/120.0.6099.109"), a form or control number ("OMB No.
 * 1545-0008") and an ISBN ("ISBN 978-0-306-40615-7"). The IP, phone and postcode
 * recognizers ask these before they add a candidate; the words are compared as strings
 * (hz_token_among()), which is cheap because only numbers of the right shape are asked about. */
#include "hz-redact-private.h"

#include <string.h>

/* Words before a version, release or section number (besides the date recognizer's version
 * cues, HZ_W_VERSION_CUE: "version", "v", "build", "release", "rev", "revision", "ver"). */
static const char *const version_words[] = {
  "versions", "vers", "rel", "patch", "kernel", "firmware", "fw", "bios", "sdk", "section",
  "sections", "sect", "sec", "clause", "chapter", "ch", "paragraph", "para", "article", "art",
  "appendix", "annex", "figure", "fig", "table", NULL,
};

/* Software whose name comes before its version ("Chrome 120.0.6099.109", "Python
 * 3.11.4.1"). English words that also name a host or a room ("edge", "office", "teams") are
 * left out: "office 10.0.0.5" is an address. */
static const char *const products[] = {
  "chrome", "chromium", "firefox", "safari", "opera", "msie", "webkit", "applewebkit", "gecko",
  "mozilla", "linux", "windows", "android", "ios", "ipados", "macos", "osx", "ubuntu", "debian",
  "fedora", "centos", "rhel", "python", "java", "jdk", "jre", "node", "nodejs", "npm", "pip",
  "gcc", "clang", "llvm", "cuda", "rocm", "glibc", "openssl", "openssh", "nginx", "php", "perl",
  "ruby", "rustc", "dotnet", "postgresql", "postgres", "mysql", "mariadb", "sqlite", "docker",
  "kubernetes", "electron", "qt", "gtk", "glib", "requests", "urllib3", "numpy", "torch",
  "tensorflow", NULL,
};

/* Words of networking: "ip/10.0.0.1", "address dead::beef" stay addresses. */
static const char *const net_words[] = {
  "ip", "ips", "ipv4", "ipv6", "address", "addresses", "addr", "inet", "inet6", "host", "hosts",
  "gateway", "gw", "dns", "nameserver", "server", "router", "peer", "src", "dst", "ping",
  "ping6", "route", NULL,
};

/* After these a version number may follow its cue by one word: "version number 1.2.3.4",
 * "build no. 1.2.3.4", "the version is 1.2.3.4". */
static const char *const version_fillers[] = { "number", "no", "nr", "is", "was", "string", NULL };

/* "No." and its kin before a form or control number. */
static const char *const number_words[] = { "no", "nr", "number", "num", NULL };

/* Names of forms, products and the agencies that number forms, before "No.": "Form No.",
 * "OMB Control No.", "Part No.". A list, not any acronym: the acronyms before "No." are
 * more often a person's identifiers ("NHS No.", "ID No.", "IC No.", "DL No.", "PAN No.") or
 * a phone's label ("HP No."), and a document's number may be a passport's. */
static const char *const form_words[] = {
  "form", "forms", "control", "approval", "model", "part", "catalog", "catalogue", "cat",
  "publication", "pub",
  /* US federal agencies whose forms carry a number ("OMB No." is on every federal form) and
   * standards bodies */
  "omb", "irs", "fcc", "faa", "fda", "epa", "hud", "uscis", "gsa", "opm", "dhs", "dol", "cms",
  "nist", "iso", "iec", "ansi", "ieee", "astm", "din", NULL,
};

/* Index of the token that ends at byte `g`, or G_MAXUINT. `before` is the index of the first
 * token starting at or after the number. */
static guint
token_ending_at (const HzScan *scan, guint before, gsize g)
{
  if (before == 0 || before > scan->n_toks || scan->toks[before - 1].e != g)
    return G_MAXUINT;
  return before - 1;
}

/* Skip spaces and tabs backwards from byte g. */
static gsize
skip_blank_back (const char *t, gsize g)
{
  while (g > 0 && (t[g - 1] == ' ' || t[g - 1] == '\t'))
    g--;
  return g;
}

static gboolean
version_word (const HzScan *scan, const HzToken *w)
{
  return hz_tok_in (w, HZ_W_VERSION_CUE) || hz_token_among (scan, w, version_words)
         || hz_token_among (scan, w, products);
}

gboolean
hz_number_is_version (const HzScan *scan, gsize s)
{
  const char *t = scan->text;
  guint ti = hz_token_at_or_after (scan, s);
  /* a product token of a user agent or package: "Chrome/120.0.6099.109", "Mozilla/5.0";
   * not a path or URL ("/srv/10.0.0.1", "http://host/10.0.0.1") nor an address's label */
  if (s >= 2 && t[s - 1] == '/')
    {
      guint w = token_ending_at (scan, ti, s - 1);
      if (w == G_MAXUINT)
        return FALSE;
      const HzToken *tk = &scan->toks[w];
      return (tk->flags & HZ_TOK_ALPHA) && !hz_token_among (scan, tk, net_words)
             && !(tk->s > 0 && (t[tk->s - 1] == '/' || t[tk->s - 1] == '.' || t[tk->s - 1] == ':'));
    }
  gsize g = skip_blank_back (t, s);
  /* "§ 14.9.1.2", "§14.9.1.2" */
  if (g >= 2 && (guchar) t[g - 2] == 0xC2 && (guchar) t[g - 1] == 0xA7)
    return TRUE;
  /* at most one label mark between the cue and the number: "version: 1.2.3.4", "build
   * #1.2.3.4", "(kernel 6.1.0.21)", an abbreviation's period "ver. 1.2.3.4" (not a sentence's:
   * "... Chrome. 10.0.0.1 is the host") */
  char mark = 0;
  if (g > 0 && (t[g - 1] == ':' || t[g - 1] == '=' || t[g - 1] == '.' || t[g - 1] == '#' || t[g - 1] == '('))
    {
      mark = t[g - 1];
      g = skip_blank_back (t, g - 1);
    }
  if (g == s || s - g > 4)
    return FALSE;
  guint w = token_ending_at (scan, ti, g);
  if (w == G_MAXUINT)
    return FALSE;
  if (mark == '.' && scan->toks[w].nchars > 4)
    return FALSE;
  if (version_word (scan, &scan->toks[w]))
    return TRUE;
  /* one filler word between the cue and the number: "version number 1.2.3.4" */
  if (w == 0 || !hz_token_among (scan, &scan->toks[w], version_fillers))
    return FALSE;
  const HzToken *c = &scan->toks[w - 1];
  gsize gap = scan->toks[w].s - c->e;
  return gap >= 1 && gap <= 2 && t[c->e] != '\n' && version_word (scan, c);
}

gboolean
hz_number_after_net_word (const HzScan *scan, gsize s)
{
  guint ti = hz_token_at_or_after (scan, s);
  for (guint k = 1; k <= 2 && k <= ti; k++)
    {
      const HzToken *w = &scan->toks[ti - k];
      if (s - w->e > 32)
        break;
      if (hz_token_among (scan, w, net_words))
        return TRUE;
    }
  return FALSE;
}

gboolean
hz_form_number_before (const HzScan *scan, guint ti)
{
  if (ti < 2 || ti > scan->n_toks)
    return FALSE;
  const char *t = scan->text;
  const HzToken *no = &scan->toks[ti - 1], *name = &scan->toks[ti - 2];
  gsize s = ti < scan->n_toks ? scan->toks[ti].s : scan->len;
  if (!hz_token_among (scan, no, number_words) || s - no->e > 3 || no->s - name->e > 2 || no->s == name->e)
    return FALSE;
  for (gsize q = no->e; q < s; q++)
    if (!(t[q] == ' ' || t[q] == '.' || t[q] == ':' || t[q] == '#'))
      return FALSE;
  for (gsize q = name->e; q < no->s; q++)
    if (t[q] != ' ')
      return FALSE;
  if (!hz_token_among (scan, name, form_words))
    return FALSE;
  /* the number is digits-hyphen-digits ("1545-0008"), one token */
  if (ti >= scan->n_toks)
    return FALSE;
  const HzToken *num = &scan->toks[ti];
  int hyphens = 0;
  for (gsize q = num->s; q < num->e; q++)
    {
      if (t[q] == '-')
        hyphens++;
      else if (!hz_is_digit (t[q]))
        return FALSE;
    }
  return hyphens == 1 && hz_is_digit (t[num->s]) && hz_is_digit (t[num->e - 1]);
}

/* "ISBN", "ISBN-13", "ISBN10", "isbn-10" */
static gboolean
isbn_word (const HzScan *scan, const HzToken *w)
{
  const char *p = scan->text + w->s;
  gsize n = w->e - w->s;
  return n >= 4 && g_ascii_strncasecmp (p, "isbn", 4) == 0
         && (n == 4 || ((n == 6 || n == 7) && (p[4] == '-' || hz_is_digit (p[4]))));
}

gboolean
hz_isbn_cue_before (const HzScan *scan, guint ti)
{
  if (ti == 0 || ti > scan->n_toks)
    return FALSE;
  gsize s = ti < scan->n_toks ? scan->toks[ti].s : scan->len;
  const HzToken *w = &scan->toks[ti - 1];
  if (s - w->e > 3 || memchr (scan->text + w->e, '\n', s - w->e))
    return FALSE;
  if (isbn_word (scan, w))
    return TRUE;
  /* "ISBN no. 978-...", "the ISBN is 978-..." */
  return ti >= 2 && hz_token_among (scan, w, version_fillers) && w->s - scan->toks[ti - 2].e <= 2
         && isbn_word (scan, &scan->toks[ti - 2]);
}
