/* Scrubbing: masks, numbered placeholders and pseudonyms keep all other bytes identical and
 * stay consistent within one scrubber. */
#include <string.h>
#include "hanzo/redact.h"

static char *
scrub (HzRedactor *r, HzScrubber *sc, const char *text)
{
  HzRedaction *res = hz_redactor_analyze (r, text, -1, 0, NULL);
  char *out = hz_scrubber_scrub (sc, res);
  hz_redaction_free (res);
  return out;
}

static void
test_mask (void)
{
  HzRedactor *r = hz_redactor_new (NULL);
  g_autofree char *out = hz_redact_text (r, "Reach Ilse Brandvik\nat +1 202-555-0142, thanks", -1, HZ_SCRUB_MASK, NULL);
  g_assert_cmpstr (out, ==, "Reach [PERSON]\nat [PHONE], thanks");
  hz_redactor_free (r);
}

static void
test_numbered (void)
{
  HzRedactor *r = hz_redactor_new (NULL);
  HzScrubber *sc = hz_scrubber_new (HZ_SCRUB_NUMBERED, 0);
  g_autofree char *a = scrub (r, sc, "pls forward to MARA QUINLEY, or just ping mara quinley");
  g_assert_cmpstr (a, ==, "pls forward to [PERSON_1], or just ping [PERSON_1]");
  /* a later message of the same conversation */
  g_autofree char *b = scrub (r, sc, "Dear Mara Quinley and Dr. Otto Brenner: bob@example.com");
  g_assert_cmpstr (b, ==, "Dear [PERSON_1] and Dr. [PERSON_2]: [EMAIL_1]");
  g_assert_cmpstr (hz_scrubber_lookup (sc, "[PERSON_2]"), ==, "Otto Brenner");
  g_assert_cmpstr (hz_scrubber_lookup (sc, "[EMAIL_1]"), ==, "bob@example.com");
  g_assert_null (hz_scrubber_lookup (sc, "[PERSON_9]"));
  /* an identifier written with other separators keeps its placeholder; another one gets
   * the next number */
  g_autofree char *c = scrub (r, sc, "card 4111 1111 1111 1111, again 4111-1111-1111-1111, "
                                     "then 5555 5555 5555 4444");
  g_assert_cmpstr (c, ==, "card [CREDIT_CARD_1], again [CREDIT_CARD_1], then [CREDIT_CARD_2]");
  /* a phone number with and without its international prefix */
  g_autofree char *d = scrub (r, sc, "Call +1 (212) 555-0143 or 212-555-0143, not 212-555-0199.");
  g_assert_cmpstr (d, ==, "Call [PHONE_1] or [PHONE_1], not [PHONE_2].");
  hz_scrubber_free (sc);
  hz_redactor_free (r);
}

static void
test_pseudonym (void)
{
  HzRedactor *r = hz_redactor_new (NULL);
  HzScrubber *sc = hz_scrubber_new (HZ_SCRUB_PSEUDONYM, 42);
  const char *text = "Card 4111 1111 1111 1111 of Otto Brenner, IBAN GB82WEST12345698765432, ip 10.1.2.3\n";
  g_autofree char *a = scrub (r, sc, text);
  g_autofree char *b = scrub (r, sc, text);
  g_assert_cmpstr (a, ==, b); /* consistent */
  g_assert_null (strstr (a, "Otto"));
  g_assert_null (strstr (a, "4111 1111"));
  g_assert_null (strstr (a, "GB82WEST"));
  g_assert_true (g_str_has_suffix (a, "\n"));
  /* the fakes are valid of their kind: re-analysing finds the same types */
  HzRedaction *res = hz_redactor_analyze (r, a, -1, 0, NULL);
  gboolean card = FALSE, iban = FALSE, ip = FALSE;
  for (guint i = 0; i < res->n_spans; i++)
    {
      card |= res->spans[i].type == HZ_ENTITY_CREDIT_CARD;
      iban |= res->spans[i].type == HZ_ENTITY_IBAN;
      ip |= res->spans[i].type == HZ_ENTITY_IP_ADDRESS;
    }
  g_assert_true (card && iban && ip);
  g_assert_nonnull (strstr (a, "192.0.2."));
  hz_redaction_free (res);
  hz_scrubber_free (sc);
  hz_redactor_free (r);
}

static void
test_bytes_outside_spans_kept (void)
{
  HzRedactor *r = hz_redactor_new (NULL);
  const char *text = "  a\tb\n\nMr. Otto Brenner  \n😀 call +1 202-555-0142\r\n";
  HzRedaction *res = hz_redactor_analyze (r, text, -1, 0, NULL);
  HzScrubber *sc = hz_scrubber_new (HZ_SCRUB_MASK, 0);
  g_autofree char *out = hz_scrubber_scrub (sc, res);
  /* rebuild: every gap between spans must appear verbatim, in order */
  const char *p = out;
  gsize pos = 0;
  for (guint i = 0; i <= res->n_spans; i++)
    {
      gsize end = i < res->n_spans ? res->spans[i].start_byte : res->len;
      g_assert_cmpint (strncmp (p, text + pos, end - pos), ==, 0);
      p += end - pos;
      if (i < res->n_spans)
        {
          g_autofree char *mask = g_strdup_printf ("[%s]", hz_entity_type_name (res->spans[i].type));
          g_assert_cmpint (strncmp (p, mask, strlen (mask)), ==, 0);
          p += strlen (mask);
          pos = res->spans[i].end_byte;
        }
    }
  g_assert_cmpint (*p, ==, 0);
  g_assert_cmpuint (res->n_spans, ==, 2);
  hz_scrubber_free (sc);
  hz_redaction_free (res);
  hz_redactor_free (r);
}

/* national ids: masks, numbered placeholders, and pseudonyms of the same shape that fail
 * their format's check (never a real person's number) */
static void
test_national_id (void)
{
  HzRedactor *r = hz_redactor_new (NULL);
  g_autofree char *m = hz_redact_text (r, "NHS number 943 476 5919, DNI 12345678Z.", -1, HZ_SCRUB_MASK, NULL);
  g_assert_cmpstr (m, ==, "NHS number [NATIONAL_ID], DNI [NATIONAL_ID].");

  HzScrubber *num = hz_scrubber_new (HZ_SCRUB_NUMBERED, 0);
  g_autofree char *a = scrub (r, num, "DNI 12345678Z, NIE X1234567L, again 12345678Z");
  g_assert_cmpstr (a, ==, "DNI [NATIONAL_ID_1], NIE [NATIONAL_ID_2], again [NATIONAL_ID_1]");
  g_assert_cmpstr (hz_scrubber_lookup (num, "[NATIONAL_ID_2]"), ==, "X1234567L");
  hz_scrubber_free (num);

  /* pseudonyms: the same shape (separators, letters, digits, case), never a valid number */
  static const char *const ids[] = {
    "943 476 5919", "AB 12 34 56 C", "912-70-1234", "12345678Z", "X1234567L", "RSSMRA85T10A562S",
    "2345 6789 0124", "811218-9876", "131052-308T", "85.07.30-033.28", "529.982.247-25",
    "S1234567D", "1 85 05 78 006 084 91", "2345.67.892", "86095742719", "44051401359",
  };
  static const char *const cue[] = {
    "NHS ", "", "", "", "", "", "", "", "", "", "", "", "", "BSN ", "Steuer-ID ", "PESEL ",
  };
  for (guint64 seed = 0; seed < 8; seed++)
    {
      HzScrubber *ps = hz_scrubber_new (HZ_SCRUB_PSEUDONYM, seed);
      for (gsize i = 0; i < G_N_ELEMENTS (ids); i++)
        {
          g_autofree char *text = g_strconcat (cue[i], ids[i], NULL);
          g_assert_nonnull (hz_validate_national_id (ids[i], strlen (ids[i])));
          g_autofree char *out = scrub (r, ps, text);
          gsize cl = strlen (cue[i]), n = strlen (ids[i]);
          g_assert_cmpuint (strlen (out), ==, cl + n);
          g_assert_true (strncmp (out, cue[i], cl) == 0);
          const char *fake = out + cl;
          g_assert_cmpstr (fake, !=, ids[i]);
          for (gsize k = 0; k < n; k++)
            {
              char o = ids[i][k], f = fake[k];
              if (g_ascii_isdigit (o))
                g_assert_true (g_ascii_isdigit (f));
              else if (g_ascii_isupper (o))
                g_assert_true (g_ascii_isupper (f));
              else
                g_assert_cmpint (f, ==, o);
            }
          if (hz_validate_national_id (fake, n))
            g_error ("pseudonym %s of %s is a valid number", fake, ids[i]);
          g_assert_cmpstr (hz_scrubber_lookup (ps, fake), ==, ids[i]);
          /* consistent within the scrubber */
          g_autofree char *again = scrub (r, ps, text);
          g_assert_cmpstr (again, ==, out);
        }
      hz_scrubber_free (ps);
    }
  hz_redactor_free (r);
}

/* fake SSNs and ITINs (one shape, AAA-GG-SSSS) are neither: re-analysing the scrubbed text
 * finds no US_SSN and no NATIONAL_ID (a fake ITIN made by changing one digit could be a
 * real SSN, and a fake SSN with area 9xx a real ITIN) */
static void
test_ssn_itin_fakes (void)
{
  HzRedactor *r = hz_redactor_new (NULL);
  static const char *const texts[] = {
    "ITIN 978-94-5445", "itin 912-70-1234", "SSN 429-09-3944", "ssn 536-22-1234", "ITIN 900-70-0001",
  };
  for (guint64 seed = 0; seed < 64; seed++)
    {
      HzScrubber *ps = hz_scrubber_new (HZ_SCRUB_PSEUDONYM, seed);
      for (gsize i = 0; i < G_N_ELEMENTS (texts); i++)
        {
          g_autofree char *out = scrub (r, ps, texts[i]);
          g_assert_cmpuint (strlen (out), ==, strlen (texts[i]));
          HzRedaction *res = hz_redactor_analyze (r, out, -1, 0, NULL);
          if (res->n_spans > 0)
            g_error ("the pseudonym of \"%s\" (seed %" G_GUINT64_FORMAT ") is a valid %s: %s", texts[i], seed,
                     hz_entity_type_name (res->spans[0].type), out);
          hz_redaction_free (res);
        }
      hz_scrubber_free (ps);
    }
  hz_redactor_free (r);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/redact/scrub/mask", test_mask);
  g_test_add_func ("/redact/scrub/numbered", test_numbered);
  g_test_add_func ("/redact/scrub/pseudonym", test_pseudonym);
  g_test_add_func ("/redact/scrub/bytes-outside-spans", test_bytes_outside_spans_kept);
  g_test_add_func ("/redact/scrub/national-id", test_national_id);
  g_test_add_func ("/redact/scrub/ssn-itin-fakes", test_ssn_itin_fakes);
  return g_test_run ();
}
