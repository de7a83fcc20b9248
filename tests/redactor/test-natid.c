/* NATIONAL_ID (redactor/rec-natid.c): validated national identity numbers. For every format:
 * valid numbers (check digits computed by the format's algorithm; invented people or the
 * issuers' published specimens), a wrong check digit (not found), the shapes that need a
 * cue without one (not found), and look-alikes that stay what they are (PHONE, CREDIT_CARD,
 * US_SSN). Each case lists every span of the text (surface, type and, for NATIONAL_ID, the
 * recognizer), so misses and over-redaction both fail. */
#include <string.h>
#include "hanzo/redact.h"

typedef struct {
  const char *text;
  const char *expect[4][3]; /* {surface, type, recognizer or NULL}, NULL-terminated */
} Case;

static const Case cases[] = {
  /* UK NHS number: modulus 11; every shape needs "NHS" (3-3-4 is a phone shape) */
  { "NHS number 943 476 5919", { { "943 476 5919", "NATIONAL_ID", "uk-nhs" } } },
  { "nhs no: 9434765919", { { "9434765919", "NATIONAL_ID", "uk-nhs" } } },
  { "NHS number 401-023-2137", { { "401-023-2137", "NATIONAL_ID", "uk-nhs" } } },
  { "NHS number 943 476 5918", { { "943 476 5918", "PHONE", NULL } } },   /* wrong check digit */
  { "call 943 476 5919", { { "943 476 5919", "PHONE", NULL } } },          /* no cue: a phone */
  { "nhs 4857773457 and 4857773457x", { { "4857773457", "NATIONAL_ID", "uk-nhs" } } },

  /* UK National Insurance number: HMRC prefix/suffix rules, no cue needed */
  { "my NI number is AB 12 34 56 C", { { "AB 12 34 56 C", "NATIONAL_ID", "uk-nino" } } },
  { "ref JG103759A on file", { { "JG103759A", "NATIONAL_ID", "uk-nino" } } },
  { "QQ 12 34 56 C", { { NULL } } },                 /* Q never in a prefix (HMRC specimen) */
  { "BG123456C and AB123456E", { { NULL } } },       /* banned prefix; suffix not A-D */

  /* Canada SIN: Luhn, cue always */
  { "SIN: 130 421 555", { { "130 421 555", "NATIONAL_ID", "ca-sin" } } },
  { "social insurance number 271-846-156", { { "271-846-156", "NATIONAL_ID", "ca-sin" } } },
  { "sin 130421555", { { "130421555", "NATIONAL_ID", "ca-sin" } } },
  { "SIN 130 421 556", { { "130 421 556", "PHONE", NULL } } },             /* wrong Luhn digit */
  { "ref 130 421 555", { { "130 421 555", "PHONE", NULL } } },             /* no cue */
  { "SIN 046 454 286", { { "046 454 286", "PHONE", NULL } } },             /* first digit 0 */

  /* US ITIN: 9XX-[50-65|70-88|90-92|94-99]-XXXX; bare digits after "itin" only */
  { "my itin is 912-70-1234", { { "912-70-1234", "NATIONAL_ID", "us-itin" } } },
  { "my number 912-94-0001 ok", { { "912-94-0001", "NATIONAL_ID", "us-itin" } } },
  { "itin 912701234", { { "912701234", "NATIONAL_ID", "us-itin" } } },
  { "value 912-45-1234", { { NULL } } },             /* group 45: neither ITIN nor SSN */
  { "value 912701234", { { NULL } } },               /* bare digits without a cue */
  { "SSN 460-89-9847", { { "460-89-9847", "US_SSN", NULL } } },             /* stays an SSN */

  /* Netherlands BSN: elfproef, cue always */
  { "BSN 111222333", { { "111222333", "NATIONAL_ID", "nl-bsn" } } },
  { "burgerservicenummer: 2345.67.892", { { "2345.67.892", "NATIONAL_ID", "nl-bsn" } } },
  { "BSN 111222334", { { NULL } } },
  { "id 111222333", { { NULL } } },

  /* Germany Steuer-IdNr: ISO 7064 MOD 11,10 and the digit-distribution rule, cue always */
  { "Steuer-ID 86095742719", { { "86095742719", "NATIONAL_ID", "de-idnr" } } },
  { "Steuer-IdNr 86 095 742 719", { { "86 095 742 719", "NATIONAL_ID", "de-idnr" } } },
  { "idnr 47193052483", { { "47193052483", "NATIONAL_ID", "de-idnr" } } },
  { "Steuer-ID 86095742718", { { "86095742718", "PHONE", NULL } } },       /* wrong check digit */
  { "Steuer-ID 65321489075", { { "65321489075", "PHONE", NULL } } },       /* no repeated digit */
  { "number 86095742719", { { "86095742719", "PHONE", NULL } } },          /* no cue */

  /* France NIR: key 97 - (n mod 97), 2A -> 19; spaced without a cue, contiguous after one */
  { "NIR 1 85 05 78 006 084 91", { { "1 85 05 78 006 084 91", "NATIONAL_ID", "fr-nir" } } },
  { "n\xc2\xb0 de s\xc3\xa9" "cu 185057800608491", { { "185057800608491", "NATIONAL_ID", "fr-nir" } } },
  { "2 93 09 2A 045 123 97", { { "2 93 09 2A 045 123 97", "NATIONAL_ID", "fr-nir" } } },
  { "1 85 05 78 006 084 36", { { "1 85 05 78 006 084 36", "PHONE", NULL } } }, /* wrong key */
  { "185057800608491", { { NULL } } },               /* contiguous without a cue */

  /* Spain DNI / NIE: letter n mod 23, no cue */
  { "DNI 12345678Z", { { "12345678Z", "NATIONAL_ID", "es-dni" } } },
  { "48123906V", { { "48123906V", "NATIONAL_ID", "es-dni" } } },
  { "NIE X1234567L", { { "X1234567L", "NATIONAL_ID", "es-dni" } } },
  { "12345678-Z", { { "12345678-Z", "NATIONAL_ID", "es-dni" } } },
  { "12345678A and X1234567M", { { NULL } } },

  /* Italy codice fiscale: odd/even tables of DM 23/12/1976, no cue */
  { "RSSMRA85T10A562S", { { "RSSMRA85T10A562S", "NATIONAL_ID", "it-cf" } } },
  { "RSSMRA85T10A562T", { { NULL } } },

  /* India Aadhaar: Verhoeff; grouped without a cue, contiguous after one */
  { "2345 6789 0124", { { "2345 6789 0124", "NATIONAL_ID", "in-aadhaar" } } },
  { "Aadhaar 234567890124", { { "234567890124", "NATIONAL_ID", "in-aadhaar" } } },
  { "2345 6789 0125", { { "2345 6789 0125", "PHONE", NULL } } },           /* wrong check digit */
  { "234567890124", { { NULL } } },                  /* contiguous without a cue */
  { "call 2345 6789 0124", { { "2345 6789 0124", "PHONE", NULL } } },      /* a phone cue */
  { "card 4111 1111 1111 1111", { { "4111 1111 1111 1111", "CREDIT_CARD", NULL } } },
  /* 600000000007 passes both Verhoeff and Luhn with a Maestro range: the cue decides, and
   * without one it stays a card */
  { "Aadhaar 600000000007", { { "600000000007", "NATIONAL_ID", "in-aadhaar" } } },
  { "paid with 600000000007", { { "600000000007", "CREDIT_CARD", NULL } } },
  { "6000 0000 0007", { { "6000 0000 0007", "CREDIT_CARD", NULL } } },

  /* Poland PESEL: weights 1 3 7 9, date with century offsets, cue always */
  { "PESEL 44051401359", { { "44051401359", "NATIONAL_ID", "pl-pesel" } } },
  { "pesel: 02240512349", { { "02240512349", "NATIONAL_ID", "pl-pesel" } } }, /* born 2002 */
  { "PESEL 44051401358", { { "44051401358", "PHONE", NULL } } },           /* wrong check digit */
  { "PESEL 44133201354", { { "44133201354", "PHONE", NULL } } },           /* month 13 */
  { "44051401359", { { "44051401359", "PHONE", NULL } } },                 /* no cue */

  /* Sweden personnummer: Luhn + date; separator form without a cue */
  { "811218-9876", { { "811218-9876", "NATIONAL_ID", "se-pnr" } } },
  { "19811218-9876", { { "19811218-9876", "NATIONAL_ID", "se-pnr" } } },
  { "personnummer 8112189876", { { "8112189876", "NATIONAL_ID", "se-pnr" } } },
  { "811218-9875", { { "811218-9875", "PHONE", NULL } } },                 /* wrong Luhn digit */
  { "811318-9875", { { "811318-9875", "PHONE", NULL } } },                 /* month 13 */
  { "8112189876", { { "8112189876", "PHONE", NULL } } },                   /* no cue */
  { "phone 811218-9876", { { "811218-9876", "PHONE", NULL } } },           /* a phone cue */

  /* Finland HETU: check character mod 31, date, century sign */
  { "131052-308T", { { "131052-308T", "NATIONAL_ID", "fi-hetu" } } },
  { "150807A4127", { { "150807A4127", "NATIONAL_ID", "fi-hetu" } } },
  { "131052-308U", { { NULL } } },
  { "310252-308Y", { { NULL } } },                   /* 31 February */

  /* Belgium national number: mod 97 (with the "2" prefix from 2000) */
  { "85.07.30-033.28", { { "85.07.30-033.28", "NATIONAL_ID", "be-nn" } } },
  { "01.02.15-123.73", { { "01.02.15-123.73", "NATIONAL_ID", "be-nn" } } },
  { "rijksregisternummer 85073003328", { { "85073003328", "NATIONAL_ID", "be-nn" } } },
  { "85.07.30-033.29", { { "85.07.30-033.29", "PHONE", NULL } } },         /* wrong check */
  { "85073003328", { { "85073003328", "PHONE", NULL } } },                 /* no cue */

  /* Brazil CPF: two mod-11 digits; dotted form without a cue */
  { "529.982.247-25", { { "529.982.247-25", "NATIONAL_ID", "br-cpf" } } },
  { "CPF 07153948600", { { "07153948600", "NATIONAL_ID", "br-cpf" } } },
  { "529.982.247-26", { { "529.982.247-26", "PHONE", NULL } } },           /* wrong check */
  { "111.111.111-11", { { "111.111.111-11", "PHONE", NULL } } },           /* one digit */
  { "52998224725", { { "52998224725", "PHONE", NULL } } },                 /* no cue */

  /* Singapore NRIC/FIN: weights 2 7 6 5 4 3 2 and the S/T, F/G, M tables */
  { "S1234567D and M1234567K", { { "S1234567D", "NATIONAL_ID", "sg-nric" },
                                 { "M1234567K", "NATIONAL_ID", "sg-nric" } } },
  { "T0718452I F2984361U G5721049X", { { "T0718452I", "NATIONAL_ID", "sg-nric" },
                                       { "F2984361U", "NATIONAL_ID", "sg-nric" },
                                       { "G5721049X", "NATIONAL_ID", "sg-nric" } } },
  { "S1234567A", { { NULL } } },

  /* whole tokens only */
  { "id12345678Z, 12345678Zs and RSSMRA85T10A562SX", { { NULL } } },
  { "order 4852345 6789 0124", { { NULL } } },
};

static void
test_cases (void)
{
  HzRedactor *r = hz_redactor_new (NULL);
  g_assert_nonnull (r);
  for (gsize c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      const Case *k = &cases[c];
      HzRedaction *res = hz_redactor_analyze (r, k->text, -1, 0, NULL);
      guint n_expect = 0;
      while (n_expect < G_N_ELEMENTS (k->expect) && k->expect[n_expect][0])
        n_expect++;
      GString *got = g_string_new (NULL);
      for (guint i = 0; i < res->n_spans; i++)
        g_string_append_printf (got, "[%.*s|%s|%s] ", (int) (res->spans[i].end_byte - res->spans[i].start_byte),
                                res->text + res->spans[i].start_byte, hz_entity_type_name (res->spans[i].type),
                                res->spans[i].recognizer);
      if (res->n_spans != n_expect)
        g_error ("\"%s\": expected %u spans, got %s", k->text, n_expect, got->str);
      for (guint i = 0; i < n_expect; i++)
        {
          const HzSpan *s = &res->spans[i];
          g_autofree char *surf = g_strndup (res->text + s->start_byte, s->end_byte - s->start_byte);
          if (strcmp (surf, k->expect[i][0]) != 0 || strcmp (hz_entity_type_name (s->type), k->expect[i][1]) != 0
              || (k->expect[i][2] && strcmp (s->recognizer, k->expect[i][2]) != 0))
            g_error ("\"%s\": span %u expected [%s|%s|%s], got %s", k->text, i, k->expect[i][0], k->expect[i][1],
                     k->expect[i][2] ? k->expect[i][2] : "*", got->str);
          if (s->type == HZ_ENTITY_NATIONAL_ID)
            g_assert_true (s->score == 0.9f || s->score == 1.0f);
        }
      g_string_free (got, TRUE);
      hz_redaction_free (res);
    }
  hz_redactor_free (r);
}

/* Score 1.0 after the row's own cue, 0.9 without; the type can be disabled. */
static void
test_score_and_enable (void)
{
  HzRedactor *r = hz_redactor_new (NULL);
  HzRedaction *a = hz_redactor_analyze (r, "DNI 12345678Z", -1, 0, NULL);
  HzRedaction *b = hz_redactor_analyze (r, "12345678Z", -1, 0, NULL);
  g_assert_cmpuint (a->n_spans, ==, 1);
  g_assert_cmpuint (b->n_spans, ==, 1);
  g_assert_cmpfloat (a->spans[0].score, ==, 1.0f);
  g_assert_cmpfloat (b->spans[0].score, ==, 0.9f);
  hz_redaction_free (a);
  hz_redaction_free (b);
  hz_redactor_set_enabled (r, HZ_ENTITY_NATIONAL_ID, FALSE);
  HzRedaction *c = hz_redactor_analyze (r, "DNI 12345678Z", -1, 0, NULL);
  g_assert_cmpuint (c->n_spans, ==, 0);
  hz_redaction_free (c);
  hz_redactor_free (r);
  g_assert_cmpstr (hz_entity_type_name (HZ_ENTITY_NATIONAL_ID), ==, "NATIONAL_ID");
  g_assert_cmpint (hz_entity_type_from_name ("national_id"), ==, HZ_ENTITY_NATIONAL_ID);
}

static void
test_validate (void)
{
  static const struct { const char *s, *rec; } ok[] = {
    { "943 476 5919", "uk-nhs" }, { "AB 12 34 56 C", "uk-nino" }, { "130-421-555", "ca-sin" },
    { "912-70-1234", "us-itin" }, { "2345.67.892", "nl-bsn" }, { "1 85 05 78 006 084 91", "fr-nir" },
    { "X1234567L", "es-dni" }, { "RSSMRA85T10A562S", "it-cf" }, { "2345 6789 0124", "in-aadhaar" },
    { "811218+9876", "se-pnr" }, { "131052-308T", "fi-hetu" }, { "85.07.30-033.28", "be-nn" },
    { "529.982.247-25", "br-cpf" }, { "S1234567D", "sg-nric" }, { "86 095 742 719", "de-idnr" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (ok); i++)
    g_assert_cmpstr (hz_validate_national_id (ok[i].s, strlen (ok[i].s)), ==, ok[i].rec);
  static const char *const bad[] = {
    "943 476 5918", "943 476 591", "QQ 12 34 56 C", "912-66-1234", "RSSMRA85T10A562T",
    "1 85 05 78 006 084 36", "12345678z", "131052-308U", "", "2345 6789 0124 ",
  };
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    g_assert_null (hz_validate_national_id (bad[i], strlen (bad[i])));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/redact/natid/cases", test_cases);
  g_test_add_func ("/redact/natid/score-enable", test_score_and_enable);
  g_test_add_func ("/redact/natid/validate", test_validate);
  return g_test_run ();
}
