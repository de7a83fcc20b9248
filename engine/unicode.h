/* engine/unicode.h — code point helpers for the tokenizers (internal to libhzengine).
 *
 * Everything here reproduces the behaviour of llama.cpp's src/unicode.cpp (c392e509) on top
 * of GLib's Unicode tables:
 *  - a lenient UTF-8 decoder (an invalid lead byte or a truncated sequence becomes U+FFFD
 *    and consumes one byte; overlong forms are not rejected, as in llama.cpp);
 *  - per-code-point category flags equal to Python `regex`'s \p{N} \p{L} \p{Z} \p{M} \p{P}
 *    \p{S} \p{C} and the White_Space set used for \s;
 *  - GPT-2's byte-to-unicode table (openai/gpt-2 encoder.py `bytes_to_unicode`).
 *
 * Thread safety: all functions are pure (the byte tables are built once, thread-safely).
 */
#pragma once

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

/** Category flags of a code point (llama.cpp's unicode_cpt_flags bit layout). Exactly one
 *  of the category bits is set for every code point <= U+10FFFF; 0 means "outside the
 *  text" (used by the pre-tokenizer scanners for positions past a fragment's end). */
typedef enum {
  HZ_UCF_NUMBER      = 1 << 1,  /* \p{N}: Nd Nl No */
  HZ_UCF_LETTER      = 1 << 2,  /* \p{L}: Lu Ll Lt Lm Lo */
  HZ_UCF_SEPARATOR   = 1 << 3,  /* \p{Z}: Zs Zl Zp */
  HZ_UCF_ACCENT_MARK = 1 << 4,  /* \p{M}: Mn Mc Me */
  HZ_UCF_PUNCTUATION = 1 << 5,  /* \p{P}: Pc Pd Ps Pe Pi Pf Po */
  HZ_UCF_SYMBOL      = 1 << 6,  /* \p{S}: Sm Sc Sk So */
  HZ_UCF_CONTROL     = 1 << 7,  /* \p{C}: Cc Cf Cs Co Cn (unassigned included) */
  HZ_UCF_WHITESPACE  = 1 << 8,  /* Unicode White_Space (Python regex \s) */
} HzUnicodeFlags;

/** Flags of `cpt`; 0 for values above U+10FFFF. */
guint    hz_unicode_flags (uint32_t cpt);

/** Simple lower-case mapping (GLib's g_unichar_tolower; identity when none). */
uint32_t hz_unicode_tolower (uint32_t cpt);

/** Decode `len` bytes of (possibly invalid) UTF-8 into code points, as llama.cpp's
 *  unicode_cpts_from_utf8: each malformed or truncated sequence, and any decoded value
 *  above U+10FFFF, yields U+FFFD and advances one byte. Appends to `out` (an array of
 *  uint32_t) and returns the number of code points appended. Never reads past `len`. */
gsize    hz_utf8_decode_lenient (const char *s, gsize len, GArray *out);

/** Replace the code points of `cpts` (an array of uint32_t) by their NFC form (Unicode
 *  canonical decomposition then composition, GLib's tables: what Hugging Face's NFC
 *  normalizer does). U+0000 and surrogates, which the lenient decoder can produce and
 *  GLib does not normalize, are starters: they are kept and the runs between them are
 *  normalized separately. */
void     hz_nfc_normalize (GArray *cpts);

/** Encode `cpt` (<= U+10FFFF) as UTF-8 into `out` (4 bytes); returns the byte count
 *  (1..4). Surrogates are encoded like any other value (as llama.cpp does). Values above
 *  U+10FFFF are encoded as U+FFFD. */
int      hz_utf8_encode (uint32_t cpt, char out[4]);

/** Length in bytes of the UTF-8 sequence starting with byte `c`, judged from its high
 *  nibble only (llama.cpp's unicode_len_utf8): 1 for ASCII and stray continuation bytes,
 *  2 for 0xC0-0xDF, 3 for 0xE0-0xEF, 4 for 0xF0-0xFF. */
static inline gsize
hz_utf8_len_from_lead (guchar c)
{
  static const guint8 lookup[16] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4 };
  return lookup[c >> 4];
}

/** GPT-2 byte-level alphabet: the code point that stands for byte `b`
 *  (printable Latin-1 bytes map to themselves, the other 68 to U+0100..U+0143). */
uint32_t hz_gpt2_byte_to_cpt (guint8 b);
/** Inverse of hz_gpt2_byte_to_cpt: the byte for `cpt`, or -1 if `cpt` is not in the
 *  GPT-2 alphabet. */
int      hz_gpt2_cpt_to_byte (uint32_t cpt);

G_END_DECLS
