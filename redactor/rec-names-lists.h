/* rec-names-lists.h — the word lists of the names family that are compared word by word
 * (rare checks; rec-names-lists.c). The others are only read through the lexicon's class
 * bits (hz_names_lists, hz-recognizers.h). */
#pragma once

#include "hz-redact-private.h"

/* NULL-terminated lower-case words. */
extern const char *const hz_names_to_person_words[];  /* "talked to X", "a letter to X" */
extern const char *const hz_names_place_of_nouns[];   /* "the town of X" */
extern const char *const hz_names_thing_nouns[];      /* "the band X" */
extern const char *const hz_names_thing_participles[]; /* "X was founded" */
extern const char *const hz_names_after_elliptical_possessive[]; /* "Macy 's in 2006" */
extern const char *const hz_names_street_abbrevs[];   /* "Collins Ave" */
extern const char *const hz_names_title_function_words[]; /* "Buddha for Mary" */
extern const char *const hz_names_vocative_after[];   /* "Loey , do you" */
