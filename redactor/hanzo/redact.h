/* hanzo/redact.h — public API of libhzredact, the span-level personal-data redactor.
 *
 * Text in (UTF-8), spans out: every span carries UTF-8 byte offsets and Unicode code-point
 * offsets (end exclusive), an entity type, a score in 0..1 and the name of the recognizer
 * that found it. Scrubbing replaces the spans and keeps every other byte identical.
 *
 * Thread safety: an HzRedactor is immutable once configured; hz_redactor_analyze() may be
 * called from any number of threads at once on the same redactor. Configuration setters
 * (hz_redactor_set_*) must not race with analysis. An HzScrubber holds per-conversation
 * state and must be used by one thread at a time.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/** Entity types. The names returned by hz_entity_type_name() are the labels of the
 *  redactor-eval data format (`../shared/redactor-eval/README.md`), plus MAC_ADDRESS, SECRET
 *  and NATIONAL_ID which that taxonomy lacks. Values are stable (stored in the vault): new
 *  types are appended. NATIONAL_ID covers national identity numbers other than the US SSN
 *  whose check digit or structure is validated (UK NHS and NINO, Canada SIN, US ITIN,
 *  Netherlands BSN, German tax id, France NIR, Spain DNI/NIE, Italy codice fiscale, India
 *  Aadhaar, Poland PESEL, Sweden personnummer, Finland HETU, Belgium national number,
 *  Brazil CPF, Singapore NRIC/FIN; redactor/rec-natid.c, redactor/README.md). */
typedef enum {
  HZ_ENTITY_NONE = 0,
  HZ_ENTITY_PERSON,
  HZ_ENTITY_EMAIL,
  HZ_ENTITY_PHONE,
  HZ_ENTITY_CREDIT_CARD,
  HZ_ENTITY_IBAN,
  HZ_ENTITY_IP_ADDRESS,
  HZ_ENTITY_MAC_ADDRESS,
  HZ_ENTITY_URL,
  HZ_ENTITY_STREET_ADDRESS,
  HZ_ENTITY_LOCATION,
  HZ_ENTITY_DATE_TIME,
  HZ_ENTITY_US_SSN,
  HZ_ENTITY_SECRET,
  HZ_ENTITY_NATIONAL_ID,
  HZ_ENTITY_N_TYPES
} HzEntityType;

/** One detected span. Offsets refer to HzRedaction.text (which equals the input when the
 *  input was valid UTF-8). `start_byte`/`end_byte` are UTF-8 byte offsets, `start_cp`/`end_cp`
 *  Unicode code-point offsets; both are end-exclusive and always on character boundaries.
 *  `recognizer` is a static string (never free it). */
typedef struct {
  gsize start_byte;
  gsize end_byte;
  gsize start_cp;
  gsize end_cp;
  HzEntityType type;
  float score;
  const char *recognizer;
} HzSpan;

/** Result of hz_redactor_analyze(): the (valid UTF-8, NUL-terminated) text the offsets refer
 *  to and its spans, sorted by start, never overlapping. Free with hz_redaction_free(). */
typedef struct {
  char *text;
  gsize len;      /* bytes of text, without the terminating NUL */
  HzSpan *spans;
  guint n_spans;
} HzRedaction;

/** How invalid UTF-8 input is treated. */
typedef enum {
  HZ_REDACT_UTF8_REPLACE = 0,       /* each invalid sequence becomes U+FFFD; offsets refer to the repaired text */
  HZ_REDACT_UTF8_REJECT  = 1 << 0,  /* fail with G_CONVERT_ERROR_ILLEGAL_SEQUENCE */
  HZ_REDACT_MODEL        = 1 << 1,  /* also run the model-based pass (hz_redactor_set_model) */
} HzRedactFlags;

typedef struct _HzRedactor HzRedactor;

/** Label of `type` ("PERSON", "EMAIL", ...), or "NONE" for out-of-range values. */
const char *hz_entity_type_name (HzEntityType type);

/** Parse a label (case-insensitive). Also accepts the Presidio names EMAIL_ADDRESS,
 *  PHONE_NUMBER, IBAN_CODE, DOMAIN_NAME (-> URL), GPE (-> LOCATION). HZ_ENTITY_NONE if unknown. */
HzEntityType hz_entity_type_from_name (const char *name);

/** Create a redactor with every entity type enabled. Loads the built-in gazetteers
 *  (compiled in as a GResource; see redactor/data/SOURCE.md). Returns NULL and sets `error`
 *  only if the built-in data is missing or corrupt. Free with hz_redactor_free(). */
HzRedactor *hz_redactor_new (GError **error);

/** Free a redactor (NULL is ignored). */
void hz_redactor_free (HzRedactor *self);

/** Enable or disable one entity type (all are enabled by default). Not thread-safe with
 *  respect to concurrent hz_redactor_analyze() calls. */
void hz_redactor_set_enabled (HzRedactor *self, HzEntityType type, gboolean enabled);

/** Drop spans scoring below `min_score` (default 0.3). Same thread-safety as above. */
void hz_redactor_set_min_score (HzRedactor *self, float min_score);

/** The learned PERSON tagger (redactor/hz-tagger.h: an averaged-perceptron linear-chain
 *  tagger over the rules' tokens and cues, trained on WNUT-17 train, see redactor/README.md).
 *  hz_redactor_new() loads the built-in weights; the environment variable
 *  HZ_REDACT_PERSON_TAGGER overrides that with a weights file, or `none` for rules only.
 *
 *  Load the weights file at `path` (NULL: the built-in weights) and use it from now on.
 *  On any error returns FALSE, with a GFileError when the file cannot be read and
 *  G_IO_ERROR_INVALID_DATA (message naming the file and the problem) when it is not a valid
 *  weights file (truncated, wrong magic/version/size, checksum mismatch, non-finite numbers),
 *  and the redactor is left without a tagger: PERSON comes from the rules alone.
 *  Same thread-safety as the setters above. */
gboolean hz_redactor_load_person_tagger (HzRedactor *self, const char *path, GError **error);

/** The PERSON tagger of encyclopedic prose: texts that read like an encyclopedia's (no chat
 *  or social-media signs, no "I"/"you"/"my", whole capitalised sentences; redactor/README.md)
 *  are tagged with a second model, trained on the same data plus Wikipedia sentences
 *  (CrossNER), when the redactor has one and a PERSON tagger at all. hz_redactor_new()
 *  loads the built-in prose weights along with the PERSON tagger; the environment variable
 *  HZ_REDACT_PROSE_TAGGER overrides them with a weights file, or `none` for the PERSON
 *  tagger on every text.
 *
 *  Load the weights file at `path` (NULL: the built-in prose weights). Errors as for
 *  hz_redactor_load_person_tagger(); on error the redactor has no prose tagger and tags
 *  prose with the PERSON tagger. Same thread-safety as the setters above. */
gboolean hz_redactor_load_prose_tagger (HzRedactor *self, const char *path, GError **error);

/** Drop the PERSON tagger and the prose tagger: names come from the rules alone. Same
 *  thread-safety as above. */
void hz_redactor_clear_person_tagger (HzRedactor *self);

/** TRUE when a PERSON tagger is in use. */
gboolean hz_redactor_has_person_tagger (const HzRedactor *self);

/** A local language model for the optional model-based pass: given `prompt` (instructions
 *  plus the text), return the model's answer (newly allocated, freed by the redactor) or
 *  NULL with `error` set. The app implements it with the engine (a prompted local model);
 *  libhzredact itself does not link the engine. Called from hz_redactor_analyze(), so it
 *  must be thread-safe if analysis runs on several threads. */
typedef char *(*HzModelFunc) (const char *prompt, gpointer user_data, GError **error);

/** Install (or with NULL remove) the model of the model-based pass. It runs only for
 *  analyses with HZ_REDACT_MODEL. The model is asked (hz_redactor_model_prompt()) for a JSON
 *  array of spans, `[{"label": "PERSON", "text": "Ann Lee", "start": 12}]` (`start` in code
 *  points, optional; the first `[` to the last `]` of the answer is parsed, so prose around
 *  it is ignored); an answer without a JSON array is read as lines `LABEL: exact text`.
 *  Every returned span is verified against the text before it is accepted: the label must
 *  be known and enabled, and the text must occur in the input as whole words — at `start`
 *  when the offset is right (that occurrence only), else every occurrence (exact case
 *  first, then ASCII-case-insensitive). Each accepted span becomes a candidate (recognizer
 *  "model", score 0.6) that rule-based spans win over in overlaps. Anything else the model
 *  says (hallucinated text, unknown labels, junk) is ignored, and a model error leaves the
 *  rule-based result unchanged. Not thread-safe with respect to concurrent analysis. */
void hz_redactor_set_model (HzRedactor *self, HzModelFunc func, gpointer user_data,
                            GDestroyNotify destroy);

/** The prompt the model-based pass sends for `text` (for tests and for the app's logging). */
char *hz_redactor_model_prompt (const char *text);

/** Find personal data in `text` (`len` bytes, or -1 for NUL-terminated). Runs the rule-based
 *  recognizers, resolves overlaps deterministically (validated identifiers first, then the
 *  longer span, then the higher score, then the earlier start) and merges adjacent spans of
 *  one name. Invalid UTF-8 (embedded NUL bytes included) is repaired with U+FFFD
 *  (g_utf8_make_valid) or rejected according to `flags`. Thread-safe (see the file comment).
 *  Returns NULL with `error` set (G_CONVERT_ERROR) only for rejected invalid UTF-8. */
HzRedaction *hz_redactor_analyze (const HzRedactor *self, const char *text, gssize len,
                                  HzRedactFlags flags, GError **error);

/** Add spans of `type` for every whole-word, ASCII-case-insensitive occurrence of
 *  `surface` in redaction->text that no span covers yet (an occurrence overlapping a span is
 *  skipped), keeping the spans sorted and disjoint with their code-point offsets. Used to
 *  carry names found earlier in a conversation (the gate's vault) into a new message.
 *  Returns the number of spans added. */
guint hz_redaction_mark_known (HzRedaction *redaction, const char *surface, HzEntityType type);

/** Free an analysis result (NULL is ignored). */
void hz_redaction_free (HzRedaction *redaction);

/* ---- scrubbing ------------------------------------------------------------------------ */

/** Scrub modes. */
typedef enum {
  HZ_SCRUB_MASK = 0,   /* "[EMAIL]": the type only */
  HZ_SCRUB_NUMBERED,   /* "[PERSON_1]": the same surface form gets the same number in one scrubber */
  HZ_SCRUB_PSEUDONYM,  /* realistic fake of the same type and shape, consistent in one scrubber */
} HzScrubMode;

typedef struct _HzScrubber HzScrubber;

/** Create a scrubber: one per conversation, so that placeholders and pseudonyms stay
 *  consistent across its messages. `seed` makes pseudonyms reproducible. Not thread-safe. */
HzScrubber *hz_scrubber_new (HzScrubMode mode, guint64 seed);

/** Free a scrubber (NULL is ignored). */
void hz_scrubber_free (HzScrubber *self);

/** Return a new string: `redaction->text` with every span replaced according to the mode;
 *  all bytes outside spans (newlines included) are copied unchanged. Surface forms are
 *  compared case-insensitively (so "MARA QUINLEY" and "mara quinley" share a placeholder). */
char *hz_scrubber_scrub (HzScrubber *self, const HzRedaction *redaction);

/** The original text that this scrubber replaced by `replacement` (a placeholder or
 *  pseudonym it produced), or NULL. The string belongs to the scrubber. This is the
 *  in-memory half of the vault; persisting it is the store's job. */
const char *hz_scrubber_lookup (HzScrubber *self, const char *replacement);

/** Seed the scrubber with a mapping made earlier (e.g. loaded from the store's vault for this
 *  conversation), so that `original` (compared case-insensitively, per type) gets
 *  `replacement` again and new placeholders are numbered after it ("[PERSON_3]" makes the
 *  next new person "[PERSON_4]"). FALSE (and nothing changes) in mask mode, or when the
 *  original or the replacement is already mapped. */
gboolean hz_scrubber_add_mapping (HzScrubber *self, HzEntityType type, const char *original,
                                  const char *replacement);

/** Callback of hz_scrubber_foreach_mapping(): one original surface and its replacement. */
typedef void (*HzScrubMappingFunc) (HzEntityType type, const char *original,
                                    const char *replacement, gpointer user_data);

/** Call `func` for every mapping the scrubber holds (seeded or made by scrubbing), in no
 *  particular order. The strings are valid during the call only. */
void hz_scrubber_foreach_mapping (HzScrubber *self, HzScrubMappingFunc func, gpointer user_data);

/** Convenience: analyze `text` with `self` and scrub it with a fresh scrubber in `mode`
 *  (seed 0). Returns NULL with `error` set as hz_redactor_analyze() does. */
char *hz_redact_text (const HzRedactor *self, const char *text, gssize len,
                      HzScrubMode mode, GError **error);

/* ---- validators (exposed for tests and other modules) ---------------------------------- */

/** Luhn (ISO/IEC 7812-1 annex B) check over the ASCII digits of `digits` (`n` bytes; other
 *  bytes are skipped). FALSE when there are fewer than 2 digits. */
gboolean hz_validate_luhn (const char *digits, gsize n);

/** TRUE when the `n` ASCII digits form a payment card number: length 12..19, a known issuer
 *  range of ISO/IEC 7812 (Visa, Mastercard 51-55 and 2221-2720, Amex, Discover, Diners,
 *  JCB incl. 1800/2131, UnionPay, Maestro, Mir, RuPay, Troy, Verve) and a valid Luhn digit. */
gboolean hz_validate_card_digits (const char *digits, gsize n);

/** TRUE when `s` (`n` bytes, spaces allowed between groups, case-insensitive) is an IBAN with
 *  a known country code, that country's length (ISO 13616 registry) and ISO 7064 mod-97 == 1. */
gboolean hz_validate_iban (const char *s, gsize n);

/** TRUE when area/group/serial follow the SSA rules: area not 000, 666 or 900-999, group not
 *  00, serial not 0000, and not one of the numbers the SSA voided after publication. */
gboolean hz_validate_us_ssn (int area, int group, int serial);

/** The recognizer name ("uk-nhs", "es-dni", ...; static) of the national identity number
 *  format that all `n` bytes of `s` form, with its separators as the redactor accepts them
 *  (e.g. "943 476 5919", "AB 12 34 56 C", "12345678Z"; letters upper case) and a valid
 *  check digit or structure (redactor/rec-natid.c cites each format's specification), or
 *  NULL. Context cues are not looked at. Pure; thread-safe. */
const char *hz_validate_national_id (const char *s, gsize n);

/** TRUE when `s` (`n` bytes, case-insensitive, without a trailing dot) is a top-level domain
 *  of the IANA root zone database (list compiled in; see redactor/data/SOURCE.md). */
gboolean hz_validate_tld (const char *s, gsize n);

/** TRUE when `s` (`n` bytes) is an ISBN: 10 digits, the last one maybe 'X', with a valid
 *  ISBN-10 check (ISO 2108: sum of (10 - k) * digit_k == 0 mod 11), or 13 digits starting
 *  978 or 979 with a valid EAN-13 check; single hyphens or spaces may separate digits
 *  ("978-0-306-40615-7", "0-8044-2957-X"). Pure; thread-safe. */
gboolean hz_validate_isbn (const char *s, gsize n);

/** Parse an IPv6 address (RFC 4291 section 2.2 text forms: full, `::`-compressed, embedded
 *  dotted IPv4) from exactly `n` bytes of `s`. Fills `out` (16 bytes) when non-NULL. */
gboolean hz_parse_ipv6 (const char *s, gsize n, guint8 *out);

G_END_DECLS
