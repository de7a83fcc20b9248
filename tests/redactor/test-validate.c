/* Validators: Luhn + issuer ranges, IBAN, SSN rules, TLDs, IPv6 text forms, ISBNs. */
#include <string.h>
#include "hanzo/redact.h"

#define CARD(s) hz_validate_card_digits (s, strlen (s))

static void
test_luhn_cards (void)
{
  g_assert_true (hz_validate_luhn ("79927398713", 11));
  g_assert_false (hz_validate_luhn ("79927398710", 11));
  g_assert_true (CARD ("4111111111111111"));          /* Visa 16 */
  g_assert_true (CARD ("4222222222222"));             /* Visa 13 */
  g_assert_true (CARD ("2221000000000009"));          /* Mastercard 2-series */
  g_assert_true (CARD ("5555555555554444"));
  g_assert_true (CARD ("378282246310005"));           /* Amex */
  g_assert_true (CARD ("6011111111111117"));          /* Discover */
  g_assert_true (CARD ("4735615260219382870"));       /* Visa 19 */
  g_assert_true (CARD ("3530111333300000"));          /* JCB */
  g_assert_false (CARD ("4111111111111112"));         /* bad Luhn */
  g_assert_false (CARD ("1700000000004"));            /* Luhn-valid ms epoch timestamp */
  g_assert_false (CARD ("2721000000000004"));         /* above the 2-series range */
  g_assert_false (CARD ("41111111111111111"));        /* Visa with 17 digits */
  g_assert_false (CARD ("0000000000000000"));
}

static void
test_iban (void)
{
  g_assert_true (hz_validate_iban ("GB82WEST12345698765432", 22));
  g_assert_true (hz_validate_iban ("GB82 WEST 1234 5698 7654 32", 27));
  g_assert_true (hz_validate_iban ("gb82west12345698765432", 22));
  g_assert_true (hz_validate_iban ("DE89370400440532013000", 22));
  g_assert_false (hz_validate_iban ("GB83WEST12345698765432", 22)); /* checksum */
  g_assert_false (hz_validate_iban ("DE8937040044053201300", 21));  /* length for DE */
  g_assert_false (hz_validate_iban ("XX82WEST12345698765432", 22)); /* unknown country */
}

static void
test_ssn (void)
{
  g_assert_true (hz_validate_us_ssn (460, 89, 9847));
  g_assert_true (hz_validate_us_ssn (849, 66, 3189)); /* randomised areas after 2011 */
  g_assert_false (hz_validate_us_ssn (0, 12, 3456));
  g_assert_false (hz_validate_us_ssn (666, 12, 3456));
  g_assert_false (hz_validate_us_ssn (912, 12, 3456));
  g_assert_false (hz_validate_us_ssn (123, 0, 3456));
  g_assert_false (hz_validate_us_ssn (123, 45, 0));
  g_assert_false (hz_validate_us_ssn (78, 5, 1120));  /* the Woolworth wallet number */
}

static void
test_tld (void)
{
  g_assert_true (hz_validate_tld ("com", 3));
  g_assert_true (hz_validate_tld ("DK", 2));
  g_assert_true (hz_validate_tld ("museum", 6));
  g_assert_false (hz_validate_tld ("valdt", 5));
  g_assert_false (hz_validate_tld ("x", 1));
  g_assert_false (hz_validate_tld ("txt", 3));
}

static void
test_ipv6 (void)
{
  guint8 a[16];
  g_assert_true (hz_parse_ipv6 ("2001:db8::1", 11, a));
  g_assert_cmpint (a[0], ==, 0x20);
  g_assert_cmpint (a[15], ==, 1);
  g_assert_true (hz_parse_ipv6 ("::1", 3, NULL));
  g_assert_true (hz_parse_ipv6 ("6e40:4041:c617:e898:c11:40d2:c669:2eb4", 38, NULL));
  g_assert_true (hz_parse_ipv6 ("::ffff:192.0.2.1", 16, a));
  g_assert_cmpint (a[12], ==, 192);
  g_assert_false (hz_parse_ipv6 ("12:30:45", 8, NULL));        /* a clock time */
  g_assert_false (hz_parse_ipv6 ("1::2::3", 7, NULL));         /* two gaps */
  g_assert_false (hz_parse_ipv6 ("1:2:3:4:5:6:7:8:9", 17, NULL));
  g_assert_false (hz_parse_ipv6 ("12345::", 7, NULL));
}

#define ISBN(s) hz_validate_isbn (s, strlen (s))

static void
test_isbn (void)
{
  g_assert_true (ISBN ("978-0-306-40615-7"));   /* ISO 2108's example, ISBN-13 */
  g_assert_true (ISBN ("9780306406157"));
  g_assert_true (ISBN ("978 0 306 40615 7"));
  g_assert_true (ISBN ("0-306-40615-2"));       /* the same book, ISBN-10 */
  g_assert_true (ISBN ("0-8044-2957-X"));       /* check character X (10) */
  g_assert_true (ISBN ("080442957x"));
  g_assert_true (ISBN ("979-10-90636-07-1"));   /* a 979 prefix */
  g_assert_false (ISBN ("978-0-306-40615-8"));  /* bad check digit */
  g_assert_false (ISBN ("0-306-40615-3"));
  g_assert_false (ISBN ("977-0-306-40615-7"));  /* 977 is ISSN, not ISBN */
  g_assert_false (ISBN ("X-306-40615-2"));      /* X only as the check character */
  g_assert_false (ISBN ("978-0-306-40615-71")); /* 14 digits */
  g_assert_false (ISBN ("0--306-40615-2"));     /* two separators in a row */
  g_assert_false (ISBN ("-0306406152"));
  g_assert_false (ISBN ("0306406152-"));
  g_assert_false (ISBN (""));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/redact/validate/luhn-cards", test_luhn_cards);
  g_test_add_func ("/redact/validate/iban", test_iban);
  g_test_add_func ("/redact/validate/ssn", test_ssn);
  g_test_add_func ("/redact/validate/tld", test_tld);
  g_test_add_func ("/redact/validate/ipv6", test_ipv6);
  g_test_add_func ("/redact/validate/isbn", test_isbn);
  return g_test_run ();
}
