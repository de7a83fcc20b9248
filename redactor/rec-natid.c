/* rec-natid.c — NATIONAL_ID: national identity numbers whose check digit (or structure) can
 * be validated. One table (`formats`) holds one row per format: the recognizer name, the
 * shapes it accepts, its validator and its whole-word context cues. Shapes that are also
 * phone, card or plain digit-run shapes are accepted only after one of the row's cues;
 * shapes specific to one format (letters in fixed places, a separator pattern no other
 * identifier uses) are accepted without one. A match is a whole token: never inside a
 * longer run of digits or a word. Candidates are HZ_TIER_VALIDATED (the check digit is
 * verified), score 1.0 with a cue and 0.9 without, so a validated national id wins an
 * overlap with a PHONE or a pattern-only candidate over the same digits; a digit-only shape
 * without its own cue is dropped after a phone or card cue. */
#include "hz-recognizers.h"

#include <string.h>

/* ---- a matched number ------------------------------------------------------------------ */

enum { NATID_MAX = 24 };

/** The text of a shape match and its characters without separators (letters upper case). */
typedef struct {
  const char *raw;
  gsize n_raw;
  char c[NATID_MAX];
  gsize n;
} NatId;

typedef gboolean (*NatIdCheck) (const NatId *m);

static inline int
dv (const NatId *m, gsize k)
{
  return m->c[k] - '0';
}

/* Value of the digits c[from, from + n). */
static guint64
num (const NatId *m, gsize from, gsize n)
{
  guint64 v = 0;
  for (gsize k = from; k < from + n; k++)
    v = v * 10 + (guint64) dv (m, k);
  return v;
}

static gboolean
all_digits (const NatId *m, gsize from, gsize n)
{
  for (gsize k = from; k < from + n; k++)
    if (!hz_is_digit (m->c[k]))
      return FALSE;
  return TRUE;
}

/* A calendar date; yy with an unknown century is valid when it is valid in 1900+yy or
 * 2000+yy (only 29 February differs). */
static gboolean
date_ok (int year, int month, int day)
{
  return year > 0 && g_date_valid_dmy ((GDateDay) day, (GDateMonth) month, (GDateYear) year);
}

static gboolean
date_ok_yy (int yy, int month, int day)
{
  return date_ok (1900 + yy, month, day) || date_ok (2000 + yy, month, day);
}

/* ---- validators, one per format -------------------------------------------------------- */

/* UK NHS number (NHS Data Dictionary, "NHS NUMBER"; NHS Digital, NHS number check digit):
 * 10 digits, modulus 11 over the first nine with weights 10..2; check = 11 - (sum mod 11),
 * 11 -> 0, 10 -> the number is never issued. */
static gboolean
check_nhs (const NatId *m)
{
  if (m->n != 10 || !all_digits (m, 0, 10))
    return FALSE;
  int sum = 0;
  for (int k = 0; k < 9; k++)
    sum += dv (m, k) * (10 - k);
  int check = 11 - sum % 11;
  if (check == 11)
    check = 0;
  return check != 10 && check == dv (m, 9);
}

/* UK National Insurance number (HMRC National Insurance Manual NIM39110): two prefix letters,
 * six digits, suffix A-D. D F I Q U V are never used in the prefix, O never as its second
 * letter, and the prefixes BG GB NK KN TN NT ZZ are not allocated. There is no check digit:
 * the allocation rules are the validation. */
static gboolean
check_nino (const NatId *m)
{
  if (m->n != 9 || !all_digits (m, 2, 6) || m->c[8] < 'A' || m->c[8] > 'D')
    return FALSE;
  char a = m->c[0], b = m->c[1];
  if (!g_ascii_isupper (a) || !g_ascii_isupper (b) || strchr ("DFIQUV", a) || strchr ("DFIQUVO", b))
    return FALSE;
  static const char *const banned[] = { "BG", "GB", "NK", "KN", "TN", "NT", "ZZ" };
  for (gsize k = 0; k < G_N_ELEMENTS (banned); k++)
    if (a == banned[k][0] && b == banned[k][1])
      return FALSE;
  return TRUE;
}

/* Canada Social Insurance Number (Employment and Social Development Canada; the check digit is
 * the Luhn digit of ISO/IEC 7812-1 annex B): 9 digits, the first not 0 (never issued) or 8
 * (not used). */
static gboolean
check_ca_sin (const NatId *m)
{
  return m->n == 9 && all_digits (m, 0, 9) && m->c[0] != '0' && m->c[0] != '8'
         && hz_validate_luhn (m->c, 9);
}

/* US Individual Taxpayer Identification Number (IRS, ITIN structure as revised in 2011,
 * Publication 1915): 9XX-GG-XXXX with the group GG in 50-65, 70-88, 90-92 or 94-99. No
 * check digit: the ranges are the validation (and area 9XX is never an SSN). */
static gboolean
check_us_itin (const NatId *m)
{
  if (m->n != 9 || !all_digits (m, 0, 9) || m->c[0] != '9')
    return FALSE;
  int g = (int) num (m, 3, 2);
  return (g >= 50 && g <= 65) || (g >= 70 && g <= 88) || (g >= 90 && g <= 92) || (g >= 94 && g <= 99);
}

/* Netherlands burgerservicenummer (Wet algemene bepalingen burgerservicenummer; the
 * "elfproef" of the BSN specification, Logius): 9 digits d1..d9 with
 * 9*d1 + 8*d2 + ... + 2*d8 - 1*d9 divisible by 11 (and not all zero). */
static gboolean
check_nl_bsn (const NatId *m)
{
  if (m->n != 9 || !all_digits (m, 0, 9))
    return FALSE;
  int sum = 0;
  for (int k = 0; k < 8; k++)
    sum += dv (m, k) * (9 - k);
  sum -= dv (m, 8);
  return sum != 0 && sum % 11 == 0 && num (m, 0, 9) != 0;
}

/* Germany Steuerliche Identifikationsnummer (§ 139b AO; BZSt specification of the IdNr):
 * 11 digits, the first not 0; among the first ten exactly one digit occurs twice or three
 * times (three times never in three adjacent places) and the others at most once; the
 * eleventh is the ISO/IEC 7064 MOD 11,10 check digit of the first ten. */
static gboolean
check_de_idnr (const NatId *m)
{
  if (m->n != 11 || !all_digits (m, 0, 11) || m->c[0] == '0')
    return FALSE;
  int count[10] = { 0 }, multi = 0, multi_digit = -1;
  for (int k = 0; k < 10; k++)
    count[dv (m, k)]++;
  for (int d = 0; d < 10; d++)
    {
      if (count[d] > 3)
        return FALSE;
      if (count[d] >= 2)
        {
          multi++;
          multi_digit = d;
        }
    }
  if (multi != 1)
    return FALSE;
  if (count[multi_digit] == 3)
    for (int k = 0; k + 2 < 10; k++)
      if (dv (m, k) == multi_digit && dv (m, k + 1) == multi_digit && dv (m, k + 2) == multi_digit)
        return FALSE;
  /* ISO/IEC 7064 MOD 11,10 (hybrid system) */
  int product = 10;
  for (int k = 0; k < 10; k++)
    {
      int sum = (dv (m, k) + product) % 10;
      if (sum == 0)
        sum = 10;
      product = (sum * 2) % 11;
    }
  int check = 11 - product;
  if (check == 10)
    check = 0;
  return check == dv (m, 10);
}

/* France numéro d'inscription au répertoire (NIR, "numéro de sécurité sociale"; INSEE, décret
 * n° 82-103 and the NIR key definition): sex (1 or 2), year YY, month MM (01-12, or 20-42 and
 * 50-99 where the month is unknown), department (01-99 or the Corsican 2A/2B), commune (3),
 * order (001-999), key = 97 - (the 13-digit number mod 97), with 2A read as 19 and 2B as
 * 18 for the key. */
static gboolean
check_fr_nir (const NatId *m)
{
  if (m->n != 15 || !all_digits (m, 0, 5) || !all_digits (m, 7, 8))
    return FALSE;
  if (m->c[0] != '1' && m->c[0] != '2')
    return FALSE;
  int month = (int) num (m, 3, 2);
  if (!((month >= 1 && month <= 12) || (month >= 20 && month <= 42) || month >= 50))
    return FALSE;
  guint64 dep;
  if (m->c[5] == '2' && (m->c[6] == 'A' || m->c[6] == 'B'))
    dep = m->c[6] == 'A' ? 19 : 18;
  else if (hz_is_digit (m->c[5]) && hz_is_digit (m->c[6]))
    {
      dep = num (m, 5, 2);
      if (dep == 0)
        return FALSE;
    }
  else
    return FALSE;
  if (num (m, 10, 3) == 0)
    return FALSE;
  guint64 n = num (m, 0, 5) * G_GUINT64_CONSTANT (100000000) + dep * 1000000 + num (m, 7, 6);
  return (guint64) (97 - n % 97) == num (m, 13, 2);
}

/* Spain DNI (Real Decreto 1553/2005) and NIE (Orden INT/2058/2008): 8 digits, or X/Y/Z
 * (read as 0/1/2) and 7 digits, followed by the letter "TRWAGMYFPDXBNJZSQVHLCKE"[n mod 23]. */
static gboolean
check_es_dni (const NatId *m)
{
  if (m->n != 9 || !g_ascii_isupper (m->c[8]) || !all_digits (m, 1, 7))
    return FALSE;
  guint64 n;
  if (hz_is_digit (m->c[0]))
    n = num (m, 0, 8);
  else if (m->c[0] >= 'X' && m->c[0] <= 'Z')
    n = (guint64) (m->c[0] - 'X') * 10000000 + num (m, 1, 7);
  else
    return FALSE;
  return "TRWAGMYFPDXBNJZSQVHLCKE"[n % 23] == m->c[8];
}

/* Italy codice fiscale (DM 23 dicembre 1976, Ministero delle Finanze, and its annexes): 6
 * letters (surname, name), year (2), month letter (ABCDEHLMPRST), day (2; women + 40), place
 * code (letter + 3), check letter. In the 7 digit places a digit may be replaced by
 * LMNPQRSTUV (omocodia). Check: characters in odd places (1st, 3rd, ...) are mapped
 * through the odd table of the decree, those in even places to 0-25 (digits 0-9, letters
 * A-Z 0-25); the sum mod 26 is the check letter (0 = A). */
static int
cf_digit (char c)
{
  static const char omo[] = "LMNPQRSTUV";
  if (hz_is_digit (c))
    return c - '0';
  const char *p = c ? strchr (omo, c) : NULL;
  return p ? (int) (p - omo) : -1;
}

static gboolean
check_it_cf (const NatId *m)
{
  static const guint8 odd[26] = { /* A..Z; the digits 0-9 map like A..J */
    1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23,
  };
  static const int digit_at[] = { 6, 7, 9, 10, 12, 13, 14 };
  if (m->n != 16)
    return FALSE;
  for (int k = 0; k < 16; k++)
    if (!hz_is_alnum_ascii (m->c[k]) || g_ascii_islower (m->c[k]))
      return FALSE;
  for (int k = 0; k < 6; k++)
    if (!g_ascii_isupper (m->c[k]))
      return FALSE;
  if (!g_ascii_isupper (m->c[8]) || !strchr ("ABCDEHLMPRST", m->c[8]) || !g_ascii_isupper (m->c[11])
      || !g_ascii_isupper (m->c[15]))
    return FALSE;
  for (gsize k = 0; k < G_N_ELEMENTS (digit_at); k++)
    if (cf_digit (m->c[digit_at[k]]) < 0)
      return FALSE;
  int day = cf_digit (m->c[9]) * 10 + cf_digit (m->c[10]);
  if (!((day >= 1 && day <= 31) || (day >= 41 && day <= 71)))
    return FALSE;
  int sum = 0;
  for (int k = 0; k < 15; k++)
    {
      char c = m->c[k];
      int v = hz_is_digit (c) ? c - '0' : c - 'A';
      sum += (k % 2 == 0) ? odd[v] : v; /* k = 0 is the 1st place, an odd one */
    }
  return 'A' + sum % 26 == m->c[15];
}

/* Verhoeff's dihedral-group check (J. Verhoeff, "Error detecting decimal codes", 1969), as
 * used for the Aadhaar number (UIDAI, Aadhaar number structure): multiplication table of
 * D5 and the permutation table. */
static gboolean
verhoeff_ok (const char *d, gsize n)
{
  static const guint8 mul[10][10] = {
    { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 }, { 1, 2, 3, 4, 0, 6, 7, 8, 9, 5 },
    { 2, 3, 4, 0, 1, 7, 8, 9, 5, 6 }, { 3, 4, 0, 1, 2, 8, 9, 5, 6, 7 },
    { 4, 0, 1, 2, 3, 9, 5, 6, 7, 8 }, { 5, 9, 8, 7, 6, 0, 4, 3, 2, 1 },
    { 6, 5, 9, 8, 7, 1, 0, 4, 3, 2 }, { 7, 6, 5, 9, 8, 2, 1, 0, 4, 3 },
    { 8, 7, 6, 5, 9, 3, 2, 1, 0, 4 }, { 9, 8, 7, 6, 5, 4, 3, 2, 1, 0 },
  };
  static const guint8 perm[8][10] = {
    { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 }, { 1, 5, 7, 6, 2, 8, 3, 0, 9, 4 },
    { 5, 8, 0, 3, 7, 9, 6, 1, 4, 2 }, { 8, 9, 1, 6, 0, 4, 3, 5, 2, 7 },
    { 9, 4, 5, 3, 1, 2, 6, 8, 7, 0 }, { 4, 2, 8, 6, 5, 7, 3, 9, 0, 1 },
    { 2, 7, 9, 3, 8, 0, 6, 4, 1, 5 }, { 7, 0, 4, 6, 9, 1, 3, 2, 5, 8 },
  };
  int c = 0;
  for (gsize k = 0; k < n; k++)
    c = mul[c][perm[k % 8][d[n - 1 - k] - '0']];
  return c == 0;
}

/* India Aadhaar (UIDAI): 12 digits, the first 2-9, the last a Verhoeff check digit. */
static gboolean
check_in_aadhaar (const NatId *m)
{
  return m->n == 12 && all_digits (m, 0, 12) && m->c[0] >= '2' && verhoeff_ok (m->c, 12);
}

/* Poland PESEL (Ustawa o ewidencji ludności, 2010; MSWiA PESEL structure): YYMMDD, serial
 * (4), check digit = (10 - (sum of the first ten times 1 3 7 9 1 3 7 9 1 3) mod 10) mod 10;
 * the month carries the century: +80 1800s, +0 1900s, +20 2000s, +40 2100s, +60 2200s. */
static gboolean
check_pl_pesel (const NatId *m)
{
  static const int w[10] = { 1, 3, 7, 9, 1, 3, 7, 9, 1, 3 };
  if (m->n != 11 || !all_digits (m, 0, 11))
    return FALSE;
  int sum = 0;
  for (int k = 0; k < 10; k++)
    sum += w[k] * dv (m, k);
  if ((10 - sum % 10) % 10 != dv (m, 10))
    return FALSE;
  int yy = (int) num (m, 0, 2), mm = (int) num (m, 2, 2), dd = (int) num (m, 4, 2);
  static const int century[5] = { 1900, 2000, 2100, 2200, 1800 };
  return date_ok (century[mm / 20] + yy, mm % 20, dd);
}

/* Sweden personnummer (Skatteverket, SKV 704; Folkbokföringslagen 18 §): YYMMDD or YYYYMMDD,
 * '-' ('+' from the 100th birthday) and four digits, the last the Luhn digit of the ten
 * digits YYMMDDNNNC; the day is + 60 in a samordningsnummer. */
static gboolean
check_se_pnr (const NatId *m)
{
  if ((m->n != 10 && m->n != 12) || !all_digits (m, 0, m->n))
    return FALSE;
  const char *d = m->c + (m->n - 10);
  if (!hz_validate_luhn (d, 10))
    return FALSE;
  int yy = (d[0] - '0') * 10 + (d[1] - '0'), mm = (d[2] - '0') * 10 + (d[3] - '0');
  int dd = (d[4] - '0') * 10 + (d[5] - '0');
  if (dd > 60)
    dd -= 60;
  if (m->n == 12)
    return date_ok ((int) num (m, 0, 2) * 100 + yy, mm, dd);
  return date_ok_yy (yy, mm, dd);
}

/* Finland henkilötunnus (HETU; Act 661/2009 and Decree 128/2010 on the population
 * information system, century signs of the 2023 amendment): DDMMYY, century sign ('+' 1800s;
 * '-' Y X W V U 1900s; A B C D E F 2000s), individual number 002-999, check character
 * "0123456789ABCDEFHJKLMNPRSTUVWXY"[DDMMYYZZZ mod 31]. */
static gboolean
check_fi_hetu (const NatId *m)
{
  if (m->n_raw != 11)
    return FALSE;
  const char *r = m->raw;
  for (int k = 0; k < 10; k++)
    if (k != 6 && !hz_is_digit (r[k]))
      return FALSE;
  int century;
  if (r[6] == '+')
    century = 1800;
  else if (r[6] == '-' || strchr ("YXWVU", r[6]))
    century = 1900;
  else if (r[6] >= 'A' && r[6] <= 'F')
    century = 2000;
  else
    return FALSE;
  guint64 dmy = 0, z = 0;
  for (int k = 0; k < 6; k++)
    dmy = dmy * 10 + (guint64) (r[k] - '0');
  for (int k = 7; k < 10; k++)
    z = z * 10 + (guint64) (r[k] - '0');
  int dd = (int) (dmy / 10000), mm = (int) (dmy / 100 % 100), yy = (int) (dmy % 100);
  if (z < 2 || !date_ok (century + yy, mm, dd))
    return FALSE;
  return "0123456789ABCDEFHJKLMNPRSTUVWXY"[(dmy * 1000 + z) % 31] == r[10];
}

/* Belgium national register number (rijksregisternummer / numéro de registre national;
 * Wet van 8 augustus 1983, Rijksregister structure): YY.MM.DD-SSS.CC, CC = 97 - (YYMMDDSSS mod
 * 97), for people born from 2000 on 97 - (2YYMMDDSSS mod 97). Month and day may be 00
 * (unknown); the month is + 20 or + 40 in a bis number. */
static gboolean
check_be_nn (const NatId *m)
{
  if (m->n != 11 || !all_digits (m, 0, 11))
    return FALSE;
  int mm = (int) num (m, 2, 2) % 20, dd = (int) num (m, 4, 2);
  if (num (m, 2, 2) > 52 || mm > 12 || dd > 31)
    return FALSE;
  guint64 base = num (m, 0, 9), cc = num (m, 9, 2);
  return 97 - base % 97 == cc || 97 - (G_GUINT64_CONSTANT (2000000000) + base) % 97 == cc;
}

/* Brazil Cadastro de Pessoas Físicas (Receita Federal, Instrução Normativa RFB nº 1548/2015;
 * the CPF check digits): two mod-11 digits, the first over d1..d9 with weights 10..2, the
 * second over d1..d10 with weights 11..2, each 0 when the remainder is < 2, else 11 -
 * remainder; numbers of one repeated digit are invalid. */
static gboolean
check_br_cpf (const NatId *m)
{
  if (m->n != 11 || !all_digits (m, 0, 11))
    return FALSE;
  gboolean same = TRUE;
  for (int k = 1; k < 11; k++)
    same &= m->c[k] == m->c[0];
  if (same)
    return FALSE;
  for (int len = 9; len <= 10; len++)
    {
      int sum = 0;
      for (int k = 0; k < len; k++)
        sum += dv (m, k) * (len + 1 - k);
      int r = sum % 11, check = r < 2 ? 0 : 11 - r;
      if (check != dv (m, len))
        return FALSE;
    }
  return TRUE;
}

/* Singapore NRIC / FIN (ICA; the check letter of the NRIC/FIN numbering scheme): prefix S T
 * (citizens and permanent residents, before/from 2000), F G (foreigners) or M (from 2022),
 * 7 digits d with weights 2 7 6 5 4 3 2, + 4 for T and G, + 3 for M; r = sum mod 11; check
 * letter "JZIHGFEDCBA"[r] (S, T), "XWUTRQPNMLK"[r] (F, G), "KLJNPQRTUWX"[10 - r] (M). */
static gboolean
check_sg_nric (const NatId *m)
{
  static const int w[7] = { 2, 7, 6, 5, 4, 3, 2 };
  if (m->n != 9 || !all_digits (m, 1, 7))
    return FALSE;
  char p = m->c[0];
  int sum = 0;
  for (int k = 0; k < 7; k++)
    sum += w[k] * dv (m, k + 1);
  if (p == 'T' || p == 'G')
    sum += 4;
  else if (p == 'M')
    sum += 3;
  int r = sum % 11;
  char want;
  if (p == 'S' || p == 'T')
    want = "JZIHGFEDCBA"[r];
  else if (p == 'F' || p == 'G')
    want = "XWUTRQPNMLK"[r];
  else if (p == 'M')
    want = "KLJNPQRTUWX"[10 - r];
  else
    return FALSE;
  return want == m->c[8];
}

/* ---- the table --------------------------------------------------------------------------- */

/* Shapes: '9' an ASCII digit, 'A' an upper-case ASCII letter, 'X' either, '?' a '+', '-' or
 * upper-case letter (Finnish century sign), '_' a space or a hyphen (the same one at every
 * '_' of a match); any other character stands for itself. */
typedef struct {
  const char *shape;
  gboolean cue;       /* accepted only after one of the row's cue words */
} NatIdShape;

typedef struct {
  const char *rec;               /* recognizer name of the spans */
  NatIdShape shapes[6];          /* {NULL}-terminated */
  NatIdCheck valid;
  const char *const *cues;       /* lower case; "a b" is two adjacent words */
} NatIdFormat;

#define CUES(...) ((const char *const[]) { __VA_ARGS__, NULL })

static const NatIdFormat formats[] = {
  /* every NHS shape is also a phone number's (3-3-4): a cue always */
  { "uk-nhs", { { "999_999_9999", TRUE }, { "9999999999", TRUE } }, check_nhs,
    CUES ("nhs") },
  { "uk-nino", { { "AA 99 99 99 A", FALSE }, { "AA999999A", FALSE } }, check_nino,
    CUES ("nino", "ni", "national insurance") },
  { "ca-sin", { { "999_999_999", TRUE }, { "999999999", TRUE } }, check_ca_sin,
    CUES ("sin", "social insurance", "nas", "assurance sociale") },
  { "us-itin", { { "999-99-9999", FALSE }, { "999999999", TRUE } }, check_us_itin,
    CUES ("itin") },
  { "nl-bsn", { { "999999999", TRUE }, { "9999.99.999", TRUE } }, check_nl_bsn,
    CUES ("bsn", "burgerservicenummer", "sofinummer", "sofi") },
  { "de-idnr", { { "99999999999", TRUE }, { "99 999 999 999", TRUE } }, check_de_idnr,
    CUES ("steuer-id", "steuerid", "idnr", "steuer-idnr", "steueridentifikationsnummer",
          "identifikationsnummer", "tin") },
  { "fr-nir", { { "9 99 99 XX 999 999 99", FALSE }, { "99999XX99999999", TRUE } }, check_fr_nir,
    CUES ("nir", "insee", "sécu", "secu", "securite", "sécurité") },
  { "es-dni", { { "99999999A", FALSE }, { "99999999-A", FALSE }, { "A9999999A", FALSE },
                { "A-9999999-A", FALSE } }, check_es_dni,
    CUES ("dni", "nie", "nif") },
  { "it-cf", { { "AAAAAAXXAXXAXXXA", FALSE } }, check_it_cf,
    CUES ("codice fiscale", "cf") },
  { "in-aadhaar", { { "9999_9999_9999", FALSE }, { "999999999999", TRUE } }, check_in_aadhaar,
    CUES ("aadhaar", "aadhar", "uid", "uidai") },
  { "pl-pesel", { { "99999999999", TRUE } }, check_pl_pesel,
    CUES ("pesel") },
  { "se-pnr", { { "999999-9999", FALSE }, { "999999+9999", FALSE }, { "99999999-9999", FALSE },
                { "9999999999", TRUE }, { "999999999999", TRUE } }, check_se_pnr,
    CUES ("personnummer", "personnr", "samordningsnummer") },
  { "fi-hetu", { { "999999?999X", FALSE } }, check_fi_hetu,
    CUES ("hetu", "henkilötunnus", "personbeteckning") },
  { "be-nn", { { "99.99.99-999.99", FALSE }, { "99999999999", TRUE } }, check_be_nn,
    CUES ("rijksregisternummer", "rijksregister", "national number", "numéro national", "nn",
          "insz", "niss") },
  { "br-cpf", { { "999.999.999-99", FALSE }, { "99999999999", TRUE } }, check_br_cpf,
    CUES ("cpf") },
  { "sg-nric", { { "A9999999A", FALSE } }, check_sg_nric,
    CUES ("nric", "fin") },
};

/* ---- matching ------------------------------------------------------------------------------ */

/* Match `shape` at t[i..len); on success fill *m and return the end, else 0. */
static gsize
shape_at (const char *t, gsize len, gsize i, const char *shape, NatId *m, char *sep_out)
{
  gsize p = i;
  char sep = 0;
  m->n = 0;
  for (const char *s = shape; *s; s++, p++)
    {
      if (p >= len)
        return 0;
      char c = t[p];
      gboolean ok;
      switch (*s)
        {
        case '9': ok = hz_is_digit (c); break;
        case 'A': ok = g_ascii_isupper (c); break;
        case 'X': ok = hz_is_digit (c) || g_ascii_isupper (c); break;
        case '?': ok = c == '+' || c == '-' || g_ascii_isupper (c); break;
        case '_':
          ok = (c == ' ' || c == '-') && (sep == 0 || sep == c);
          sep = c;
          break;
        default: ok = c == *s; break;
        }
      if (!ok)
        return 0;
      if (hz_is_alnum_ascii (c) && m->n < NATID_MAX)
        m->c[m->n++] = c;
    }
  m->raw = t + i;
  m->n_raw = p - i;
  *sep_out = sep ? sep : (strchr (shape, ' ') ? ' ' : 0);
  return p;
}

/* The match [i, e) is a whole token: not inside a word or a longer number (another digit
 * group after a separator, or before one). `sep` is the match's group separator, if any. */
static gboolean
whole (const char *t, gsize len, gsize i, gsize e, char sep)
{
  if (hz_alnum_before (t, i) || hz_alnum_at (t, len, e))
    return FALSE;
  if (i >= 2 && t[i - 1] && strchr ("-./+", t[i - 1]) && hz_is_alnum_ascii (t[i - 2]))
    return FALSE;
  if (i >= 1 && t[i - 1] == '+')
    return FALSE; /* "+44 ...": an international phone number */
  if (e + 1 < len && t[e] && strchr ("-./+", t[e]) && hz_is_alnum_ascii (t[e + 1]))
    return FALSE;
  if (sep == ' ')
    {
      if (i >= 2 && t[i - 1] == ' ' && hz_is_digit (t[i - 2]))
        return FALSE;
      if (e + 1 < len && t[e] == ' ' && hz_is_digit (t[e + 1]))
        return FALSE;
    }
  return TRUE;
}

/* Token `tk` is the word w[0..wn) (lower case, UTF-8), whole and ignoring case; a token of
 * other scripts is compared by the tokenizer's hash of its lower case (hz_lex_key()). */
static gboolean
token_is_word (const HzScan *scan, const HzToken *tk, const char *w, gsize wn)
{
  if (!(tk->flags & HZ_TOK_NONASCII))
    return tk->e - tk->s == wn && g_ascii_strncasecmp (scan->text + tk->s, w, wn) == 0;
  return tk->hash != 0 && tk->hash == hz_key_hash (w, wn);
}

/* One of the row's cues ends among the `window` tokens before token `ti`: each word of a
 * cue is a whole token, the words adjacent. */
static gboolean
cue_before (const HzScan *scan, guint ti, const char *const *cues)
{
  enum { WINDOW = 5 };
  guint from = ti > WINDOW ? ti - WINDOW : 0;
  for (guint k = from; k < ti; k++)
    for (const char *const *c = cues; *c; c++)
      {
        const char *w = *c;
        guint tk = k;
        gboolean ok = TRUE;
        while (ok && *w)
          {
            const char *sp = strchr (w, ' ');
            gsize wn = sp ? (gsize) (sp - w) : strlen (w);
            ok = tk < ti && token_is_word (scan, &scan->toks[tk], w, wn);
            tk++;
            w += wn + (sp ? 1 : 0);
          }
        if (ok)
          return TRUE;
      }
  return FALSE;
}

/* A phone or card cue among the 4 tokens before token `ti`: the phone cues of rec-phone.c
 * without the generic "number", "no", "nr" (which also introduce national ids). */
static gboolean
phone_or_card_cue_before (const HzScan *scan, guint ti)
{
  static const char *const generic[] = { "number", "numbers", "no", "nr", NULL };
  for (guint k = ti > 4 ? ti - 4 : 0; k < ti; k++)
    {
      const HzToken *tk = &scan->toks[k];
      if (hz_tok_in (tk, HZ_W_CARD_CUE))
        return TRUE;
      if (!hz_tok_in (tk, HZ_W_PHONE_CUE))
        continue;
      if (!hz_token_among (scan, tk, generic))
        return TRUE;
    }
  return FALSE;
}

static gboolean
digits_only_shape (const char *shape)
{
  for (const char *s = shape; *s; s++)
    if (*s == 'A' || *s == 'X' || *s == '?')
      return FALSE;
  return TRUE;
}

/* The shapes by the length of their leading run of letter/digit places (the alphanumeric run
 * a match starts with; a shape with the Finnish century sign '?' under 6, its run before a
 * '+' or '-' sign, and under 11, its run with a letter sign): a token whose leading run has
 * another length cannot match a shape, so each token start tries only the few shapes of its
 * run's length. Entries are (format << 3 | shape) in table order. */
enum { LEAD_MAX = 16, LEAD_SLOTS = 16 };
static guint8 by_lead[LEAD_MAX + 1][LEAD_SLOTS];
static guint8 n_by_lead[LEAD_MAX + 1];
G_STATIC_ASSERT (G_N_ELEMENTS (formats) < 32 && G_N_ELEMENTS (formats[0].shapes) <= 8);

static void
by_lead_add (gsize lead, gsize f, gsize s)
{
  g_assert (lead <= LEAD_MAX && n_by_lead[lead] < LEAD_SLOTS);
  by_lead[lead][n_by_lead[lead]++] = (guint8) (f << 3 | s);
}

/* The sorted hashes (hz_key_hash() of the lower-case word, as the tokenizer computes each
 * token's) of every word of every cue of the table. */
static guint64 *cue_hashes;
static guint n_cue_hashes;

/* Build by_lead and cue_hashes, once. */
static void
tables_init (void)
{
  static gsize once = 0;
  if (g_once_init_enter (&once))
    {
      for (gsize f = 0; f < G_N_ELEMENTS (formats); f++)
        for (gsize s = 0; formats[f].shapes[s].shape; s++)
          {
            const char *sh = formats[f].shapes[s].shape;
            const char *q = strchr (sh, '?');
            if (q)
              {
                by_lead_add ((gsize) (q - sh), f, s);
                by_lead_add (strspn (sh, "9AX?"), f, s);
              }
            else
              by_lead_add (strspn (sh, "9AX"), f, s);
          }
      GArray *a = g_array_new (FALSE, FALSE, sizeof (guint64));
      for (gsize f = 0; f < G_N_ELEMENTS (formats); f++)
        for (const char *const *c = formats[f].cues; *c; c++)
          for (const char *w = *c; *w;)
            {
              const char *sp = strchr (w, ' ');
              gsize wn = sp ? (gsize) (sp - w) : strlen (w);
              guint64 h = hz_key_hash (w, wn);
              g_array_append_val (a, h);
              w += wn + (sp ? 1 : 0);
            }
      g_array_sort (a, hz_u64_cmp);
      n_cue_hashes = a->len;
      cue_hashes = (guint64 *) g_array_free (a, FALSE);
      g_once_init_leave (&once, 1);
    }
}

/* A validated national id starting at byte i: add the best one (longest, then with a cue,
 * then table order) and return its end, else 0. */
static gsize
natid_at (HzScan *scan, gsize i, guint ti)
{
  const char *t = scan->text;
  gsize len = scan->len;
  gsize run = i;
  while (run < len && run - i <= LEAD_MAX && hz_is_alnum_ascii (t[run]))
    run++;
  run -= i;
  if (run > LEAD_MAX || n_by_lead[run] == 0)
    return 0;
  gsize best_e = 0;
  gboolean best_cue = FALSE;
  const char *best_rec = NULL;
  guint32 cue_looked = 0, cue_found = 0; /* bit f: row f's cues looked up / found */
  for (guint x = 0; x < n_by_lead[run]; x++)
    {
      guint f = by_lead[run][x] >> 3;
      const NatIdFormat *fm = &formats[f];
      const NatIdShape *sh = &fm->shapes[by_lead[run][x] & 7];
      NatId m;
      char sep;
      gsize e = shape_at (t, len, i, sh->shape, &m, &sep);
      if (!e || e < best_e || !whole (t, len, i, e, sep) || !fm->valid (&m))
        continue;
      if (!(cue_looked & (1u << f)))
        {
          cue_looked |= 1u << f;
          if (cue_before (scan, ti, fm->cues))
            cue_found |= 1u << f;
        }
      gboolean cue = (cue_found >> f) & 1;
      if (sh->cue && !cue)
        continue;
      /* a digit-only shape without its own cue after a phone or card cue is a phone or card
       * number that happens to pass the check ("call 2345 6789 0124") */
      if (!cue && digits_only_shape (sh->shape) && phone_or_card_cue_before (scan, ti))
        continue;
      if (e > best_e || (cue && !best_cue))
        {
          best_e = e;
          best_cue = cue;
          best_rec = fm->rec;
        }
    }
  if (!best_e)
    return 0;
  hz_scan_add (scan, i, best_e, HZ_ENTITY_NATIONAL_ID, best_cue ? 1.0f : 0.9f, HZ_TIER_VALIDATED,
               best_rec);
  return best_e;
}

void
hz_rec_natid (HzScan *scan)
{
  if (!scan->r->enabled[HZ_ENTITY_NATIONAL_ID] || !hz_scan_has_digits (scan))
    return;
  const char *t = scan->text;
  tables_init ();
  /* a national id is whole tokens: it starts at a token start with a digit or an upper-case
   * letter (every shape does); a token of letters only can only be a NINO prefix ("AB 12 34
   * 56 C") */
  gsize done = 0;
  for (guint k = 0; k < scan->n_toks; k++)
    {
      const HzToken *tk = &scan->toks[k];
      gsize i = tk->s;
      if (i < done || !(hz_is_digit (t[i]) || g_ascii_isupper (t[i])))
        continue;
      if ((tk->flags & HZ_TOK_ALPHA) && !(tk->e - i == 2 && (tk->flags & HZ_TOK_UPPER)))
        continue;
      gsize e = natid_at (scan, i, k);
      if (e)
        done = e;
    }
}

const char *
hz_validate_national_id (const char *s, gsize n)
{
  g_return_val_if_fail (s != NULL || n == 0, NULL);
  for (gsize f = 0; f < G_N_ELEMENTS (formats); f++)
    for (const NatIdShape *sh = formats[f].shapes; sh->shape; sh++)
      {
        NatId m;
        char sep;
        if (strlen (sh->shape) == n && shape_at (s, n, 0, sh->shape, &m, &sep) == n && formats[f].valid (&m))
          return formats[f].rec;
      }
  return NULL;
}

gboolean
hz_natid_cue_word (const HzScan *scan, guint i)
{
  guint64 h = scan->toks[i].hash;
  if (h == 0)
    return FALSE;
  tables_init ();
  return bsearch (&h, cue_hashes, n_cue_hashes, sizeof (guint64), hz_u64_cmp) != NULL;
}
