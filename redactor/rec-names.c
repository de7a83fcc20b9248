/* rec-names.c — PERSON and LOCATION from capitalisation, gazetteers and context cues.
 *
 * Runs of capitalised words (initials and particles such as "van" or "de" allowed inside)
 * are scored with: the given-name and surname gazetteers (US Census 1990 / SSA, see
 * data/SOURCE.md), a list of common English words (SCOWL) that marks ordinary capitalised
 * words, titles ("Dr", "Mrs"), cue phrases before the run ("my name is", "hi", "dear",
 * "ping", "thanks", "by"), organisation words after it ("Inc", "University") and the place
 * gazetteer (countries, regions, cities). Lower-case and ALL-CAPS text need gazetteer or cue
 * evidence. A name found once is also found at its other occurrences in the same text,
 * whatever their case. All cue matching is on whole words. */
#include "rec-names.h"

#include <stdlib.h>
#include <string.h>

static const char *const titles[] = {
  "mr", "mrs", "ms", "miss", "mister", "dr", "doctor", "prof", "professor", "sir", "madam",
  "mx", "lady", "lord", "rev", "reverend", "fr", "sr", "sra", "herr", "frau", "mme", "mlle",
  "dame", "captain", "capt", "sgt", "sergeant", "officer", "judge", "senator", "president",
  "nurse", "uncle", "aunt", "auntie", "grandma", "grandpa",
  /* ranks and offices: cues, never part of the name */
  "general", "gen", "brigadier", "colonel", "col", "lieutenant", "lt", "major", "maj",
  "admiral", "adm", "commander", "cmdr", "corporal", "cpl", "private", "pvt", "marshal",
  "governor", "gov", "mayor", "chancellor", "minister", "ambassador", "bishop", "archbishop",
  "cardinal", "pope", "king", "queen", "prince", "princess", "duke", "duchess", "earl",
  "count", "countess", "baron", "baroness", "emperor", "empress", "sheikh", "rabbi", "imam",
  "pastor", "coach", "detective", "inspector", "constable", "agent", "chief", NULL,
};

/* Nationality and language adjectives, religions and other capitalised non-names
 * (written for this project). */
static const char *const not_names[] = {
  "american", "british", "english", "french", "german", "spanish", "italian", "portuguese",
  "dutch", "danish", "swedish", "norwegian", "finnish", "icelandic", "irish", "scottish",
  "welsh", "russian", "polish", "czech", "slovak", "hungarian", "romanian", "bulgarian",
  "greek", "turkish", "arabic", "arab", "persian", "iranian", "iraqi", "israeli", "jewish",
  "hebrew", "egyptian", "african", "nigerian", "kenyan", "ethiopian", "indian", "pakistani",
  "bengali", "chinese", "japanese", "korean", "vietnamese", "thai", "indonesian", "filipino",
  "malaysian", "australian", "canadian", "mexican", "brazilian", "argentine", "argentinian",
  "chilean", "peruvian", "colombian", "cuban", "european", "asian", "latin", "prussian",
  "austrian", "swiss", "belgian", "serbian", "croatian", "slovenian", "ukrainian",
  "lithuanian", "latvian", "estonian", "soviet", "roman", "byzantine", "ottoman", "celtic",
  "christian", "catholic", "protestant", "muslim", "islamic", "buddhist", "hindu", "sikh",
  "orthodox", "lutheran", "anglican", "baptist", "methodist", "democrat", "democratic",
  "republican", "liberal", "conservative", "socialist", "communist", "labour", "western",
  "eastern", "northern", "southern", "central", "national", "royal", "imperial", "federal",
  "international", "olympic", "god", "allah", "lol", "omg", "wtf", "lmao",
  "haha", "hahaha", "yay", "ok", "okay", "tbh", "smh", "idk", "btw", "imo", "rip", "thx",
  "pls", "plz", "ur", "u", "im", "ive", "dont", "cant", "wont", "didnt", "isnt", "youre",
  "i'm", "i'd", "i'll", "i've", "thats", "whats", "hes", "shes", "theres", "wasnt", "havent", "havnt",
  "doesnt", "aint", "gonna", "wanna", "gotta", "yall", "iban", "atm", "ssn", "pin", "id", "url", "pdf", "faq", "ceo",
  "cto", "cfo", "hr", "it", "pc", "tv", "usb", "gps", "dna", "nasa", "nato", "un", "eu", "usa",
  "uk", "vip", "diy", "asap", "fyi", "aka",
  /* labels of contact forms ("E-mail: ...", "Website: ...") */
  "e-mail", "website", "homepage", "url", "fax", "tel", "mobile", "phone", "address",
  /* function words that are also in the name lists ("In", "My", "Will") */
  "in", "on", "at", "by", "to", "as", "so", "do", "an", "my", "we", "he", "me", "no", "or",
  "if", "is", "of", "and", "the", "for", "but", "not", "all", "can", "her", "his", "our",
  "you", "she", "they", "this", "that", "these", "those", "with", "from", "after", "before",
  "when", "then", "than", "there", "here", "what", "who", "why", "how", "where", "while",
  "during", "since", "until", "under", "over", "into", "onto", "upon", "about", "also",
  /* interjections and intensifiers of informal text */
  "fuck", "fucking", "fuckin", "shit", "damn", "dammit", "wow", "ya", "yea", "yeah", "yes",
  "yep", "nope", "lmfao", "rofl", "bruh", "bro", "dude", "poor", "love", "awesome", "cool",
  "super", "mega", "epic", "big", "vs", "feat", "ft",
  /* roles of chat transcripts ("Bot: What's your name?") */
  "bot", "chatbot", "assistant", "system",
  /* legal forms of firms, never a name on their own ("CBS , Inc.") */
  "inc", "ltd", "llc", "plc", "gmbh", "pty", "corp", NULL,
};

/* Words that start the name of a team, facility or administrative unit ("FC Basel",
 * "Camp Howe", "Fort Worth", "Kreis Flensburg"): the run is not a person. */
static const char *const org_before[] = {
  "fc", "afc", "cf", "sc", "ac", "camp", "fort", "mount", "mt", "lake", "cape", "kreis",
  "hms", "uss", "ss", "port", "lac", "rio", "san", "santa", "saint", "sainte", "bad", NULL,
};

/* The first word of a stage name ("Lil Yachty", "DJ Switch", "MC Lyte"): part of the name,
 * and what follows it is a name even when it is an English word. */
static const char *const stage_prefixes[] = { "lil", "dj", "mc", "yung", NULL };

/* Words right before a name (checked on the 1-3 tokens before the run). */
static const char *const cues_before[] = {
  "name", "named", "called", "hi", "hello", "hey", "dear", "thanks", "thank", "regards",
  "cheers", "love", "sincerely", "signed", "by", "with", "meet", "met", "ask", "tell", "ping",
  "forward", "cc", "contact", "user", "customer", "patient", "client", "attn", "attention",
  "from", "wife", "husband", "son", "daughter", "brother", "sister", "friend", "mom", "dad",
  "mother", "father", "boss", "colleague", "manager", "congrats", "congratulations", "reach",
  "email", "text", "message", "call", "bye", "yo", "sorry", "am", "im", "i'm", "is", "says",
  "said", "asks", "asked", "replies", "replied", "kid", "child", "partner", "grandfather",
  "grandmother", "cousin", "nephew", "niece", "mate", NULL,
};

/* Strong cues: a single following word (any case) is a name when not a common word. */
static const char *const strong_cues[] = { "name", "named", "called", "dear", "hi", "hey",
                                           "hello", "ping", "thanks", "regards", "cheers",
                                           "sincerely", "love", "attn", "mr", "mrs", "ms", "dr",
                                           NULL };

static const char *const verbs_after[] = { "said", "says", "wrote", "told", "asked", "replied",
                                           "born", "died", "married", "who", "whose", "and",
                                           "shouted", "yelled", "smiled", "laughed", "cried",
                                           "whispered", "spent", "thinks", "thought", "feels",
                                           "felt", "wants", "wanted", "likes", "liked", "loves",
                                           "loved", "hates", "hated", "knows", "knew", "met",
                                           "joined", "moved", "lives", "lived", "works",
                                           "worked", "studied", "graduated", "retired",
                                           "resigned", "sings", "sang", "played", "starred",
                                           "himself", "herself", "accepted", "announced",
                                           "became", "came", "started", "migrated", "sat",
                                           "planned", "attained", "led", "defeated",
                                           "succeeded", "scored", "won", "lost", "signed",
                                           "returned", "served", "claimed", "argued",
                                           "admitted", "denied", "explained", "insisted",
                                           "added", "noted", "recalled", "decided", "is", "was",
                                           "has", "had", "also", "holds", "held", "began",
                                           "begins", "directed",
                                           "performed", "continues", "continued",
                                           /* the verbs that follow a name in the tagger's
                                            * training data (>= 3 times, >= 20 % of their
                                            * uses), with their other tense */
                                           "tells", "gets", "got", "takes", "took", "talks",
                                           "talked", "quits", "quit", "dies", "gives", "gave",
                                           "scores", "announces", "wins", "becomes", "reveals",
                                           "revealed", "reviews", "reviewed", "testifies",
                                           "testified", "joins", "plays", "speaks", "spoke",
                                           "signs", "attacks", "attacked", "pulls", "pulled",
                                           "pays", "paid", "warns", "warned", "shows", "showed",
                                           "confirms", "confirmed", "reaches", "reached", "asks",
                                           "returns", "admits", "meets", "finds", "found",
                                           "fails", "failed", NULL };

/* Auxiliaries, adverbs and verbs that follow the subject of a chat sentence ("Niskanen
 * should have", "Fedorova stated", "Tanner just"): with a word outside every list before
 * them at the start of a message, that word is a name. */
static const char *const modal_verbs[] = { "will", "would", "should", "could", "can", "did", "does",
                                           "might", "must", "stated", "looks", "looked", "got",
                                           "gets", "makes", "made", "needs", "tried", "tries",
                                           "went", "goes", "just", "never", "always", "really",
                                           "better", NULL };

/* Articles and possessives ("a", "my"; not "that", also a conjunction: "stated that
 * Trifonov was"). */
static const char *const determiners[] = { "a", "an", "the", "my", "your", "his", "her", "our",
                                           "their", "this", "these", "those", NULL };

/* Words that follow a name and a comma when the name is addressed ("Loey, do you", "Grant,
 * what if", "Shan, can I"). Compared one by one (rare check). */
static const char *const vocative_after[] = { "you", "your", "u", "ur", "do", "can", "could",
                                              "please", "pls", "plz", "i", "we", "what", "how",
                                              "why", "when", "where", "thank", "thanks", "love",
                                              NULL };

/* Words after a name that are said of places and things as well as of people (copulas,
 * "and", "who", "won", "held"): no evidence of a person on their own. */
static const char *const copulas[] = { "is", "was", "has", "had", "also", "and", "who", "whose",
                                       "won", "lost", "became", "served", "held", "holds", NULL };

static const char *const org_words[] = {
  "inc", "corp", "corporation", "ltd", "llc", "plc", "gmbh", "ag", "sa", "co", "company",
  "group", "university", "college", "school", "bank", "records", "band", "club", "fc",
  "united", "association", "institute", "foundation", "society", "party", "church",
  "hospital", "airlines", "airways", "motors", "studios", "entertainment", "media", "news",
  "times", "press", "league", "council", "committee", "department", "ministry", "agency",
  "services", "systems", "technologies", "solutions", "international", "academy", "museum",
  "river", "mountains", "lake", "island", "islands", "street", "road", "avenue", "county",
  "city", "state", "province", "district", "river", "valley", "bay", "park", "festival",
  "award", "awards", "cup", "championship", "series", "album", "show", "magazine", "journal",
  "network", "channel", "radio", "tv", "games", "war", "act", "prize", "church", "orchestra",
  "team", "army", "navy", "force", "court", "station", "airport", "hotel", "centre", "center",
  "stadium", "arena", "oval", "parish", "brigade", "regiment", "battalion", "division", "corps",
  "limited", "pty", "command", "wikipedia", "castle", "palace", "cathedral", "abbey", "tower",
  "studio", "theatre", "theater", "gallery", "library", "railway", "railroad", "dockers",
  "incorporated", "holdings", "partners", "ventures", "labs", "software", "pharmaceuticals",
  "capital", "global", "enterprises", "industries", "tech", "networks", "cunty", "hall",
  "field", "province", "county", "republic", "kingdom", "empire", "dynasty", "mountain",
  "forest", "desert", "sea", "ocean", "peninsula", "canal", "creek", "beach", "pyrenees",
  "alps", "highlands", "plebiscites", "house", "post", "exchange", "cave", "fields", "book",
  "metro", "schoolhouse", "regency", "trophy", "commission", "herald", "tribune", "gazette",
  "observer", "courier", "chronicle", "review", "bulletin", "supermarket", "mall", "cinema",
  "chapel", "temple", "mosque", "synagogue", "monastery", "convent", "schools", "clinic",
  "prison", "zoo", "fund", "trust", "bureau", "office", "authority", "board", "senate",
  "assembly", "parliament", "congress", "cabinet", "federation", "alliance", "coalition",
  "movement", "legion", "squadron", "fleet", "cup", "open", "grand", "prix", "marathon",
  "olympics", "games", "tournament", "expo", "conference", "summit", "commune", "suburb",
  "chain", "convention", "brand", "manufacturer", "retailer", "label", "genus", "species",
  "municipality", "analytics", "consulting", "consultants", "logistics", "insurance", "bakery",
  "foods", "brewing", "brewery", "pharma", "therapeutics", "biotech", "robotics", "energy",
  "telecom", "communications", "properties", "realty", "investments", "advisors", "associates",
  "architects", "engineering", "construction", "cafe", "restaurant", "bistro", "salon", NULL,
};

/* Calendar words are never names on their own ("before Friday"). */
static const char *const calendar[] = { "monday", "tuesday", "wednesday", "thursday", "friday",
                                        "saturday", "sunday", "january", "february", "march",
                                        "april", "june", "july", "august", "september",
                                        "october", "november", "december", NULL };

/* Before a place. The strong cues make an unknown capitalised word a place; the weak ones
 * ("at Teradata", "of Camden") only tip a known city or place name that is also a person's
 * name towards the place. */
static const char *const loc_cues[] = { "in", "from", "to", "near", "visit", "visiting",
                                        "flew", "across", "around", "outside", "into", "toward",
                                        "towards", NULL };
static const char *const loc_cues_weak[] = { "at", "via", "of", NULL };

/* Verbs and nouns that take a person after "to" ("talked to X", "married to X", "a letter
 * to X"): there "to" is no place cue */
static const char *const to_person_words[] = {
  "talk", "talks", "talked", "talking", "speak", "speaks", "spoke", "spoken", "speaking",
  "said", "say", "says", "write", "writes", "wrote", "written", "writing", "reply", "replied",
  "replies", "married", "marry", "engaged", "introduced", "introduce", "sent", "send", "sends",
  "gave", "give", "gives", "given", "belongs", "belong", "belonged", "listen", "listened",
  "listening", "reached", "explained", "complained", "apologized", "apologised", "reported",
  "report", "letter", "note", "message", "email", "emailed", "texted", "wave", "waved",
  "thanks", "thank", "according", "related", "sister", "brother", "son", "daughter", "wife",
  "husband", "assistant", "deputy", "successor", "heir", "tribute", "dedicated", "addressed",
  "lent", "sold", "owe", "owed", "pass", "passed", "handed", "forwarded", NULL
};

/* Nouns that name a place with "of" ("the town of Bridgton", "the county seat of Paxton",
 * "the region of Baranja"): the name after "of" is that place. Compared one by one (rare
 * check). */
static const char *const place_of_nouns[] = {
  "town", "city", "village", "hamlet", "township", "borough", "parish", "municipality", "commune",
  "county", "seat", "suburb", "province", "region", "state", "district", "capital", "port",
  "island", "isle", "kingdom", "republic", "duchy", "principality", "canton", "prefecture", NULL
};

/* Nouns of a thing or a group that its name follows ("the band Deadsy", "their song Hunter",
 * "the ship Mary Rose"): after a determiner, such a noun makes the name no person's.
 * Compared one by one (rare check). */
static const char *const thing_nouns[] = {
  "band", "group", "album", "song", "single", "film", "movie", "novel", "book", "magazine",
  "newspaper", "journal", "ship", "vessel", "company", "firm", "label", "brand", "show",
  "series", "game", "team", "club", "station", "channel", "airline", "restaurant", "hotel",
  "website", "app", "anthem", "opera", "musical", "poem", "painting", "episode", "festival",
  "tour", "car", "model", "engine", "horse", NULL
};

/* Participles said of firms, buildings and places after a copula ("Caloi was founded",
 * "Nyrstar was listed"), never of a person. Compared one by one (rare check). */
static const char *const thing_participles[] = {
  "founded", "established", "incorporated", "acquired", "headquartered", "listed", "merged",
  "formed", "manufactured", "built", "constructed", "demolished", "located", "situated", NULL
};

/* Words after an elliptical possessive, which names a shop or firm ("Ivey 's and Hudson
 * Belk", "Dillard 's was added", "became Macy 's in 2006"). Compared one by one (rare
 * check). */
static const char *const after_elliptical_possessive[] = {
  "and", "or", "in", "at", "was", "is", "became", "has", "had", "as", "on", "with", "which",
  "where", "to", "for", NULL
};

/* Street-type abbreviations that end a street's name even after a given name ("Collins
 * Ave", "Grant Blvd"). Compared one by one (rare check). */
static const char *const street_abbrevs[] = { "ave", "blvd", "rd", "st", "ln", "hwy", "pkwy", NULL };

/* Words that stay lower case inside a title ("Buddha for Mary", "Rock am Ring"). Compared
 * one by one (rare check). */
static const char *const title_function_words[] = {
  "a", "an", "the", "of", "for", "to", "in", "on", "at", "by", "and", "or", "with", "from",
  "de", "la", "le", "da", "di", "del", "am", "im", "von", "is", "s", NULL
};

/* Last words of a place name ("Mill Village", "Bashall Town", "Kent County") */
static const char *const place_suffixes[] = { "village", "town", "city", "township", "borough",
                                              "county", "province", "district", "valley", "bay",
                                              "island", "islands", "beach", "springs", "falls",
                                              "heights", "harbour", "harbor", "lake", "ville",
                                              "burg", "hamlet", "parish", "municipality",
                                              "brook", "pond", "creek", "river", "hill", "hills",
                                              "mountain", "mountains", "forest", "woods", NULL };

static const char *const connectors[] = { "van", "von", "de", "der", "den", "da", "di", "del",
                                          "della", "dos", "das", "du", "le", "la", "al", "el",
                                          "bin", "ibn", "ben", "af", "zu", "y", NULL };

typedef struct {
  gsize s, e;        /* byte range of the word without a possessive 's */
  gboolean given, sur, common, place, city, initial, conn, cap;
  gboolean city_only; /* in the city list only (not a country/region/large city, no name) */
  gboolean given_freq; /* one of the most frequent given names ("Nick", "Grace") */
  gboolean sur_freq;   /* one of the most frequent surnames ("Short", "Walker") */
} Word;

const HzWordList hz_names_lists[] = {
  { HZ_W_TITLE, titles },
  { HZ_W_NAME_CUE, cues_before },
  { HZ_W_STRONG_CUE, strong_cues },
  { HZ_W_VERB_AFTER, verbs_after },
  { HZ_W_ORG, org_words },
  { HZ_W_CALENDAR, calendar },
  { HZ_W_LOC_CUE, loc_cues },
  { HZ_W_LOC_CUE_WEAK, loc_cues_weak },
  { HZ_W_PLACE_SUFFIX, place_suffixes },
  { HZ_W_NAME_CONN, connectors },
  { HZ_W_NOT_NAME, not_names },
  { HZ_W_ORG_BEFORE, org_before },
  { HZ_W_STAGE_PREFIX, stage_prefixes },
  { HZ_W_MODAL, modal_verbs },
  { HZ_W_DETERMINER, determiners },
  { HZ_W_COPULA, copulas },
  { 0, NULL },
};

/* End of the token without a trailing possessive ('s, ’s). */
static gsize
word_end (const HzScan *scan, const HzToken *t)
{
  const char *s = scan->text;
  gsize e = t->e;
  if (e - t->s > 3 && (s[e - 1] == 's' || s[e - 1] == 'S'))
    {
      if (s[e - 2] == '\'')
        return e - 2;
      if (e - t->s > 5 && (guchar) s[e - 4] == 0xE2 && (guchar) s[e - 3] == 0x80 && (guchar) s[e - 2] == 0x99)
        return e - 4;
    }
  return e;
}

/* Only one space (or the dot and space of an initial, or of "St.", "Mt.", "Ft." opening a
 * place's name: "St. Louis") between tokens a and b. */
static gboolean
tight (const HzScan *scan, const HzToken *a, const HzToken *b)
{
  gsize g = b->s - a->e;
  const char *t = scan->text;
  if (g == 1)
    return t[a->e] == ' ';
  if (g == 2 && t[a->e] == '.' && t[a->e + 1] == ' ')
    return a->e - a->s == 1
           || (a->e - a->s == 2 && (t[a->s] == 'S' || t[a->s] == 'M' || t[a->s] == 'F') && t[a->s + 1] == 't');
  return FALSE;
}

static gboolean
is_cap_word (const HzToken *t)
{
  return (t->flags & HZ_TOK_ALPHA) && (t->flags & HZ_TOK_CAP);
}

static void
word_info (const HzScan *scan, const HzToken *t, Word *w)
{
  const HzRedactor *r = scan->r;
  w->s = t->s;
  w->e = word_end (scan, t);
  gsize n = w->e - w->s;
  /* "A" and "I" without a period and not after a capitalised word are the article and the
   * pronoun ("A Storm to Come", "cause I Haite"), not initials ("John A Smith") */
  w->initial = t->nchars == 1 && (t->flags & HZ_TOK_UPPER)
               && !((scan->text[t->s] == 'A' || scan->text[t->s] == 'I') && (t->e >= scan->len || scan->text[t->e] != '.')
                    && ((t->flags & HZ_TOK_SENT) || t == scan->toks || !is_cap_word (t - 1) || !tight (scan, t - 1, t)));
  w->conn = hz_tok_in (t, HZ_W_NAME_CONN) && (t->flags & HZ_TOK_LOWER);
  w->cap = (t->flags & HZ_TOK_ALPHA) && (t->flags & (HZ_TOK_CAP | HZ_TOK_UPPER));
  guint64 cls = w->e == t->e ? t->cls : hz_lex_lookup (&r->lex, scan->text + w->s, n);
  w->given = n >= 2 && (cls & HZ_WB (HZ_W_GIVEN));
  w->sur = n >= 2 && (cls & HZ_WB (HZ_W_SURNAME));
  w->given_freq = n >= 2 && (cls & HZ_WB (HZ_W_GIVEN_FREQ));
  w->sur_freq = n >= 2 && (cls & HZ_WB (HZ_W_SURNAME_FREQ));
  /* a single capital letter is an initial ("John A. Leiva"), not the word "a" or "m" */
  w->common = !w->initial && ((cls & HZ_WB (HZ_W_COMMON)) != 0 || (t->flags & HZ_TOK_ELONG) || t->nchars == 1);
  /* a place or city that is also a person's name ("Casey", "Jordan", "Mason") counts as a
   * place only after a cue such as "in" (judge_run) */
  w->city = (cls & (HZ_WB (HZ_W_CITY) | HZ_WB (HZ_W_PLACE))) != 0;
  w->place = (cls & HZ_WB (HZ_W_PLACE)) != 0 && !(scan->informal && w->given);
  w->city_only = w->city && !(cls & HZ_WB (HZ_W_PLACE));
  if (w->city && !w->given && !w->sur && !w->common)
    w->place = TRUE;
}

/* Chat-style text: a sentence that starts in lower case, a lower-case "i", an elongated
 * word or an emoji. Capitalisation is then a stronger name cue. Two signals are needed. */
enum { INFORMAL_SIGNALS = 2 };
static gboolean
is_informal (const HzScan *scan)
{
  /* one lower-case sentence start alone is often a fragment */
  int signals = 0;
  for (guint i = 0; i < scan->n_toks && signals < INFORMAL_SIGNALS; i++)
    {
      const HzToken *t = &scan->toks[i];
      const char *x = scan->text + t->s;
      if ((t->flags & HZ_TOK_SENT) && (t->flags & HZ_TOK_LOWER) && (t->flags & HZ_TOK_ALPHA))
        signals++;
      else if (t->e - t->s == 1 && x[0] == 'i')
        signals += 2;
      else if ((t->flags & HZ_TOK_ALPHA)
               && ((t->flags & HZ_TOK_ELONG)
                   || (hz_tok_in (t, HZ_W_NOT_NAME) && t->nchars >= 3 && !(t->cls & HZ_WB (HZ_W_COMMON)))))
        signals++;
    }
  for (int c = 0xF0; c <= 0xF4 && signals < INFORMAL_SIGNALS; c++)
    if (scan->has[c])
      signals += 2; /* lead byte of an astral-plane character: emoji */
  return signals >= INFORMAL_SIGNALS;
}

/* The text ends as written prose does: with a full stop, a closing parenthesis or a
 * quote. Chat messages often end without ("see you Tanvir", "ha! love it Ozzie!"). */
static gboolean
ends_like_prose (const HzScan *scan)
{
  gsize e = scan->len;
  while (e > 0 && (scan->text[e - 1] == ' ' || scan->text[e - 1] == '\n' || scan->text[e - 1] == '\r'))
    e--;
  return e == 0 || scan->text[e - 1] == '.' || scan->text[e - 1] == ')' || scan->text[e - 1] == '"';
}

static gboolean
is_shouting (const HzScan *scan)
{
  guint up = 0, alpha = 0;
  for (guint i = 0; i < scan->n_toks; i++)
    if (scan->toks[i].flags & HZ_TOK_ALPHA)
      {
        alpha++;
        if ((scan->toks[i].flags & HZ_TOK_UPPER) && scan->toks[i].nchars > 1)
          up++;
      }
  return alpha >= 4 && up * 10 >= alpha * 6;
}

/* Longest place-gazetteer match of words [a, b) starting at a (joined by single spaces). */
static guint
place_match (const HzScan *scan, guint a, guint b)
{
  /* multi-word look-ups only when the first word starts some multi-word place */
  guint top = hz_tok_in (&scan->toks[a], HZ_W_PLACE_HEAD) ? MIN (b, a + 4) : a + 1;
  for (guint k = top; k > a; k--)
    {
      gsize s = scan->toks[a].s, e = word_end (scan, &scan->toks[k - 1]);
      if (e - s > 60)
        continue;
      if (k == a + 1)
        {
          /* one word, also with a possessive ("Mary's" is no town of that name) */
          const HzToken *t = &scan->toks[a];
          guint64 cls = e == t->e ? t->cls : hz_lex_lookup (&scan->r->lex, scan->text + s, e - s);
          guint64 named = HZ_WB (HZ_W_GIVEN) | HZ_WB (HZ_W_SURNAME);
          if (((cls & HZ_WB (HZ_W_PLACE)) && !(scan->informal && (cls & HZ_WB (HZ_W_GIVEN))))
              || ((cls & HZ_WB (HZ_W_CITY)) && !(cls & (named | HZ_WB (HZ_W_COMMON)))))
            return 1;
          continue;
        }
      if (hz_lex_lookup (&scan->r->lex, scan->text + s, e - s) & (HZ_WB (HZ_W_PLACE) | HZ_WB (HZ_W_CITY)))
        return k - a;
    }
  return 0;
}

gsize
hz_names_person_end (const HzScan *scan, gsize e)
{
  static const char *const gen[] = { "jr", "sr", "jnr", "snr" };
  const char *t = scan->text;
  if (e >= scan->len || t[e] != '.')
    return e;
  for (gsize k = 0; k < G_N_ELEMENTS (gen); k++)
    {
      gsize n = strlen (gen[k]);
      if (e >= n + 1 && g_ascii_strncasecmp (t + e - n, gen[k], n) == 0 && t[e - n - 1] == ' ')
        return e + 1;
    }
  return e;
}

static void
add (HzScan *scan, gsize s, gsize e, HzEntityType type, float score, const char *rec)
{
  hz_scan_add (scan, s, type == HZ_ENTITY_PERSON ? hz_names_person_end (scan, e) : e, type, score, HZ_TIER_NAME, rec);
}

static gboolean
n_is_calendar (const HzScan *scan, guint a, guint b)
{
  return b - a == 1 && hz_tok_in (&scan->toks[a], HZ_W_CALENDAR);
}

/* Bytes s[0..n) end with the ASCII `suffix`. */
static gboolean
has_suffix_len (const char *s, gsize n, const char *suffix)
{
  gsize k = strlen (suffix);
  return n >= k && memcmp (s + n - k, suffix, k) == 0;
}

/* Token i comes right after a strong cue, as a salutation's name does ("Dear | Grace", "hi
 * | Sunny"). */
static gboolean
salutation_before (const HzScan *scan, guint i)
{
  return i > 0 && hz_tok_in (&scan->toks[i - 1], HZ_W_STRONG_CUE);
}

/* A strong cue ("named", "hi", "dear", "Mr") among the two tokens before token i. */
static gboolean
strong_cue_before (const HzScan *scan, guint i)
{
  return hz_context_before (scan, i, 2, HZ_W_STRONG_CUE);
}

/* Token i is joined by "and" / "&" / "," to a capitalised word that is a known given name
 * or surname ("Marrero and Murphy", "Kónya, Becker and Vasquez"). */
static gboolean
coordinated (const HzScan *scan, guint i)
{
  const HzToken *t = &scan->toks[i];
  const guint64 nm = HZ_WB (HZ_W_GIVEN) | HZ_WB (HZ_W_SURNAME);
  if (i + 2 < scan->n_toks && (hz_token_is (scan, &scan->toks[i + 1], "and") || scan->text[t->e] == ',')
      && is_cap_word (&scan->toks[i + 2]) && (scan->toks[i + 2].cls & nm))
    return TRUE;
  if (i + 1 < scan->n_toks && scan->text[t->e] == ',' && is_cap_word (&scan->toks[i + 1])
      && (scan->toks[i + 1].cls & nm))
    return TRUE;
  if (i >= 2 && hz_token_is (scan, &scan->toks[i - 1], "and") && is_cap_word (&scan->toks[i - 2])
      && (scan->toks[i - 2].cls & nm) && !(scan->toks[i - 2].cls & HZ_WB (HZ_W_COMMON)))
    return TRUE;
  return FALSE;
}

/* Token i is one of the three names of "A, B and C" (single capitalised words) that follows
 * a preposition or verb taking a company ("from", "at", "for", "joined", "by") or "the", or
 * that an organisation word follows: a firm named after its partners ("from Hawkins,
 * Richardson and Santana", "The Clark, Romero and Hall Orchestra"). A list after ":" or
 * without such a word ("our founders: Kónya, Becker and Vasquez") stays a list of people. */
gboolean
hz_names_firm_of_partners (const HzScan *scan, guint i)
{
  static const char *const before[] = { "from", "at", "for", "joined", "by", "with", "of",
                                         "to", "join", "the", NULL };
  for (guint k0 = (i >= 4 ? i - 4 : 0); k0 <= i; k0++)
    {
      if (k0 + 3 >= scan->n_toks)
        continue;
      const HzToken *A = &scan->toks[k0], *B = &scan->toks[k0 + 1], *C = &scan->toks[k0 + 3];
      if (!is_cap_word (A) || !is_cap_word (B) || !is_cap_word (C)
          || !hz_token_is (scan, &scan->toks[k0 + 2], "and") || scan->text[A->e] != ','
          || (i != k0 && i != k0 + 1 && i != k0 + 3))
        continue;
      if (k0 + 4 < scan->n_toks && hz_tok_in (&scan->toks[k0 + 4], HZ_W_ORG)
          && (scan->toks[k0 + 4].flags & (HZ_TOK_CAP | HZ_TOK_UPPER)) && tight (scan, C, &scan->toks[k0 + 4]))
        return TRUE;
      if (k0 == 0)
        continue;
      if (hz_token_among (scan, &scan->toks[k0 - 1], before))
        return TRUE;
    }
  return FALSE;
}

/* A possessive written apart, as tokenised text has it ("Belgrano 's army"): token i is
 * "'s" right after a space. */
static gboolean
possessive_after (const HzScan *scan, guint i)
{
  if (i >= scan->n_toks)
    return FALSE;
  const HzToken *t = &scan->toks[i];
  const char *x = scan->text;
  return t->s >= 2 && x[t->s - 1] == '\'' && x[t->s - 2] == ' ' && t->e - t->s == 1
         && (x[t->s] == 's' || x[t->s] == 'S');
}

/* A dialogue speaker: "Ubul: What a wife." at the start of a line. */
static gboolean
speaker_label (const HzScan *scan, guint i)
{
  const HzToken *t = &scan->toks[i];
  if (t->e + 1 >= scan->len || scan->text[t->e] != ':' || scan->text[t->e + 1] != ' ')
    return FALSE;
  return t->s == 0 || scan->text[t->s - 1] == '\n';
}

/* Words that are never part of a lower-case name: the cue words of every recognizer. */
static const guint64 lower_stop = HZ_WB (HZ_W_NOT_NAME) | HZ_WB (HZ_W_TITLE) | HZ_WB (HZ_W_CALENDAR)
                                  | HZ_WB (HZ_W_NAME_CUE) | HZ_WB (HZ_W_STRONG_CUE) | HZ_WB (HZ_W_VERB_AFTER)
                                  | HZ_WB (HZ_W_LOC_CUE) | HZ_WB (HZ_W_ORG) | HZ_WB (HZ_W_MONTH)
                                  | HZ_WB (HZ_W_PHONE_CUE) | HZ_WB (HZ_W_ST_SUFFIX) | HZ_WB (HZ_W_UNIT)
                                  | HZ_WB (HZ_W_COPULA);

/* The lower-case surname after a given name that ends at token i - 1 ("kylie minogue",
 * "benjamin a seiler", "eric g. samoylova"): an optional one-letter initial, then a word of
 * three letters or more that is no English word or cue word and, unless `unknown_ok`, is in
 * the surname list. Returns the token index after the surname, or i if there is none. */
static guint
lower_surname_after (const HzScan *scan, guint i, gboolean unknown_ok)
{
  guint j = i;
  if (j == 0 || j >= scan->n_toks || !tight (scan, &scan->toks[j - 1], &scan->toks[j]))
    return i;
  const HzToken *u = &scan->toks[j];
  /* an initial that is also a word ("a", "i", chat's "u") only before a surname that is no
   * English word ("benjamin a seiler", not "mi a back") */
  gboolean word_initial = FALSE;
  if (u->nchars == 1 && (u->flags & HZ_TOK_LOWER) && (u->flags & HZ_TOK_ALPHA) && j + 1 < scan->n_toks)
    {
      word_initial = strchr ("aiu", scan->text[u->s]) != NULL;
      /* "m ross", "g. samoylova" */
      const HzToken *v = &scan->toks[j + 1];
      gsize g = v->s - u->e;
      if (!((g == 1 && scan->text[u->e] == ' ') || (g == 2 && scan->text[u->e] == '.' && scan->text[u->e + 1] == ' ')))
        return i;
      j++;
      u = v;
    }
  if (!(u->flags & HZ_TOK_LOWER) || !(u->flags & HZ_TOK_ALPHA) || u->nchars < 3 || (u->cls & lower_stop)
      || (u->cls & HZ_WB (HZ_W_PLACE)))
    return i;
  /* after a lower-case given name, a frequent surname that is also an English word counts
   * too ("paul walker", "martin short"; not "ima just", "rick roll"), unless it is a word of
   * the text's grammar (lower_stop); after a capitalised given name such a word is an
   * ordinary word ("Emma just has") */
  if ((u->cls & HZ_WB (HZ_W_COMMON))
      && (word_initial || !(scan->toks[i - 1].flags & HZ_TOK_LOWER) || !(u->cls & HZ_WB (HZ_W_SURNAME_FREQ))))
    return i;
  if (!unknown_ok && !(u->cls & HZ_WB (HZ_W_SURNAME)))
    return i;
  return j + 1;
}

/* Token i is a verb said of people and not of things too ("met", "said"; not "is"). */
static gboolean
verb_after (const HzScan *scan, guint i)
{
  return i < scan->n_toks && hz_tok_in (&scan->toks[i], HZ_W_VERB_AFTER) && !hz_tok_in (&scan->toks[i], HZ_W_COPULA);
}

/* Token i is a word of list `bit` (no token: FALSE). */
static gboolean
tok_in (const HzScan *scan, guint i, int bit)
{
  return i < scan->n_toks && hz_tok_in (&scan->toks[i], bit);
}

/* Token i is one of `words` (no token: FALSE). Compares strings: for rare checks only. */
static gboolean
tok_among (const HzScan *scan, guint i, const char *const *words)
{
  return i < scan->n_toks && hz_token_among (scan, &scan->toks[i], words);
}

/* Token i follows the word `prep` after a lower-case word of `words`: "to" after a word that
 * takes a person there ("talked to | Jens Quenby"), "of" after a kind of place ("the town of
 * | Bridgton", "county seat of | Paxton") */
static gboolean
after_prep_of (const HzScan *scan, guint i, const char *prep, const char *const *words)
{
  return i >= 2 && hz_token_is (scan, &scan->toks[i - 1], prep) && (scan->toks[i - 2].flags & HZ_TOK_LOWER)
         && tok_among (scan, i - 2, words);
}

gboolean
hz_names_to_person (const HzScan *scan, guint i)
{
  return after_prep_of (scan, i, "to", to_person_words);
}

/* an identifier starts right after byte e, past at most three spaces, ':' or '#' (binary
 * search of scan->ident_starts) */
static gboolean
identifier_after (const HzScan *scan, gsize e)
{
  gsize p = e;
  while (p < scan->len && p < e + 3 && (scan->text[p] == ' ' || scan->text[p] == ':' || scan->text[p] == '#'))
    p++;
  if ((p == e && p < scan->len) || scan->n_ident_starts == 0)
    return FALSE;
  guint64 key = p;
  return bsearch (&key, scan->ident_starts, scan->n_ident_starts, sizeof (guint64), hz_u64_cmp) != NULL;
}

gboolean
hz_names_identifier_label (const HzScan *scan, guint i, guint j)
{
  static const char *const between[] = { "is", "was", "number", "no", "nr", "num", NULL };
  if (i >= j)
    return FALSE;
  gboolean listed = FALSE;
  for (guint k = i; k < j; k++)
    {
      if (!hz_natid_cue_word (scan, k))
        return FALSE;
      /* in capitals, as such labels are written ("HETU", "NINO"), even a word of the name
       * lists is the label */
      listed |= (scan->toks[k].cls & (HZ_WB (HZ_W_GIVEN) | HZ_WB (HZ_W_SURNAME))) != 0
                && !(scan->toks[k].flags & HZ_TOK_UPPER && scan->toks[k].nchars > 1);
    }
  if (!listed)
    return TRUE;
  /* "Sin: 046 454 286", "Nino number 12..." */
  guint k = j;
  while (k < scan->n_toks && k < j + 2 && tok_among (scan, k, between))
    k++;
  return identifier_after (scan, word_end (scan, &scan->toks[k - 1]));
}

static gboolean
tok_is_copula (const HzScan *scan, guint i)
{
  return i < scan->n_toks && hz_tok_in (&scan->toks[i], HZ_W_COPULA) && !hz_token_is (scan, &scan->toks[i], "and");
}

/* The name that ends right before token i is addressed: a comma or "!" (spaces around
 * allowed) and then a word such as "you", "do" or "please" ("Loey , do you ..."). */
static gboolean
vocative (const HzScan *scan, guint i)
{
  if (i == 0 || i >= scan->n_toks)
    return FALSE;
  gboolean mark = FALSE;
  for (gsize p = scan->toks[i - 1].e; p < scan->toks[i].s; p++)
    {
      char c = scan->text[p];
      if (c == ',' || c == '!')
        {
          if (mark)
            return FALSE;
          mark = TRUE;
        }
      else if (c != ' ')
        return FALSE;
    }
  return mark && tok_among (scan, i, vocative_after);
}

/* Token i is a copula ("is", "was") whose complement names a kind of place or organisation
 * within the next few words ("Aisby is a village", "Bilka is a Danish chain"): the subject
 * is no person. */
gboolean
hz_names_describes_thing (const HzScan *scan, guint i)
{
  if (i >= scan->n_toks || !hz_tok_in (&scan->toks[i], HZ_W_COPULA))
    return FALSE;
  /* "Caloi was founded", "Bilka is headquartered": said of firms and buildings */
  if (i + 1 < scan->n_toks && (scan->toks[i + 1].flags & HZ_TOK_LOWER) && tok_among (scan, i + 1, thing_participles))
    return TRUE;
  for (guint k = i + 1; k < scan->n_toks && k <= i + 6; k++)
    {
      const HzToken *t = &scan->toks[k];
      if (hz_tok_in (t, HZ_W_PLACE_SUFFIX) || hz_tok_in (t, HZ_W_ORG))
        return TRUE;
      /* "Okafor is from Orlek Systems": past a preposition the words describe something else */
      if (hz_tok_in (t, HZ_W_LOC_CUE) || hz_tok_in (t, HZ_W_LOC_CUE_WEAK))
        break;
      if (scan->text[t->e] == ',' || scan->text[t->e] == '.' || (k > i + 1 && (t->flags & HZ_TOK_SENT)))
        break;
    }
  return FALSE;
}

/* Tokenized text (CoNLL tokens joined by spaces): the mark c ('@', '#') stands alone, as a
 * token of its own, right before byte s, with one space between ("RT @ name", "# Tag"). */
static inline gboolean
lone_mark_before (const HzScan *scan, gsize s, char c)
{
  const char *x = scan->text;
  return s >= 2 && x[s - 1] == ' ' && x[s - 2] == c && (s == 2 || g_ascii_isspace (x[s - 3]));
}

/* Token t is the name of a handle or hashtag ("@FunnyVines", "#ShareTheLove"): an account or
 * topic name, not a person's name in running text. */
static gboolean
handle_or_tag (const HzScan *scan, const HzToken *t)
{
  if (!scan->has['@'] && !scan->has['#'])
    return FALSE;
  gsize p = t->s;
  /* the name may continue an earlier part of the handle ("@P_Rezzphere") */
  while (p > 0 && (hz_is_alnum_ascii (scan->text[p - 1]) || scan->text[p - 1] == '_'))
    p--;
  if (p > 0 && (scan->text[p - 1] == '@' || scan->text[p - 1] == '#'))
    return TRUE;
  /* tokenized text: a lone "#" and one space before the name ("# StayTuned") */
  return p == t->s && lone_mark_before (scan, p, '#');
}

gboolean
hz_names_field_label (const HzScan *scan, guint i)
{
  const HzToken *t = &scan->toks[i];
  return t->e < scan->len && scan->text[t->e] == ':' && !(t->cls & (HZ_WB (HZ_W_GIVEN) | HZ_WB (HZ_W_SURNAME)))
         && (t->cls & (HZ_WB (HZ_W_COMMON) | HZ_WB (HZ_W_NOT_NAME)));
}

gboolean
hz_names_after_at (const HzScan *scan, const HzToken *t)
{
  const char *x = scan->text;
  gsize s = t->s;
  return (s >= 1 && x[s - 1] == '@') || (s >= 2 && x[s - 1] == ' ' && x[s - 2] == '@');
}

/* Token t starts the account name of an @-mention: "@name", or in tokenized text (CoNLL files
 * joined by spaces, as the WNUT-17 test split writes tweets) a lone "@" and one space before it
 * ("RT @ MissMcCleary :"). Returns the end byte of the account name (letters of any script,
 * digits and '_'), or 0. An account name identifies a person's account,
 * so it is personal data whatever the name looks like. Not a mention: '@' after a letter,
 * digit or dot (e-mail addresses, "x@y"; tokenized "jo @ gmail . com"), and where '@' is
 * "at": a number, time or ordinal ("@ 5", "@5pm", "@2nd"), a lower-case English word ("meet @
 * home", "@home", "@everyone"), and in the spaced form a place ("I live @ London"). */
static gsize
mention_end (const HzScan *scan, const HzToken *t)
{
  const char *x = scan->text;
  gsize s = t->s;
  if (s >= 1 && x[s - 1] == '@')
    {
      if (s >= 2 && (hz_is_alnum_ascii (x[s - 2]) || x[s - 2] == '.' || x[s - 2] == '_' || (guchar) x[s - 2] >= 0x80))
        return 0;
    }
  else if (lone_mark_before (scan, s, '@'))
    {
      if (g_ascii_isdigit (x[s]))
        return 0;
      /* "I live @ London": a place after a spaced '@' is the place recognizers' */
      if (t->cls & (HZ_WB (HZ_W_PLACE) | HZ_WB (HZ_W_CITY)))
        return 0;
    }
  else
    return 0;
  /* '@' as "at": a lower-case English word ("meet @home") and group mentions ("@everyone",
   * "@here", "@channel") */
  if ((t->flags & HZ_TOK_LOWER) && (t->cls & HZ_WB (HZ_W_COMMON)) && !(t->cls & HZ_WB (HZ_W_GIVEN))
      && (t->e >= scan->len || x[t->e] != '_'))
    return 0;
  /* the account name: ASCII letters, digits and '_', and letters of other scripts ("@José");
   * not an apostrophe, hyphen or emoji after it ("@Sam's", "@Sam😀") */
  gsize e = s;
  gboolean letter = FALSE;
  while (e < scan->len)
    {
      guchar c = (guchar) x[e];
      if (c < 0x80)
        {
          if (!hz_is_alnum_ascii ((char) c) && c != '_')
            break;
          letter |= g_ascii_isalpha (c) != 0;
          e++;
          continue;
        }
      gunichar u = g_utf8_get_char_validated (x + e, (gssize) (scan->len - e));
      if (u == (gunichar) -1 || u == (gunichar) -2 || !g_unichar_isalnum (u))
        break;
      letter |= g_unichar_isalpha (u);
      e = g_utf8_next_char (x + e) - x;
    }
  if (!letter)
    return 0;
  /* a time or an ordinal ("@5pm", "@2nd floor") */
  if (g_ascii_isdigit (x[s]))
    {
      gsize k = s;
      while (k < e && g_ascii_isdigit (x[k]))
        k++;
      if (e - k <= 2)
        return 0;
    }
  /* a tokenized e-mail address ("jo @ gmail . com"): a lower-case domain ending follows */
  gsize d = e + (e < scan->len && x[e] == ' ');
  if (d < scan->len && x[d] == '.')
    {
      d += 1 + (d + 1 < scan->len && x[d + 1] == ' ');
      gsize l = d;
      while (l < scan->len && g_ascii_islower (x[l]))
        l++;
      if (l - d >= 2 && l - d <= 6 && (l == scan->len || g_ascii_isspace (x[l])))
        return 0;
    }
  return e;
}

/* Token t is a camel-case compound whose first part is an English or function word of three
 * letters or more ("NextToBlow", "FakeNews", "RollerCoaster", "SpaceX"): a hashtag, channel
 * or product name written without its "#". Name prefixes stay names ("McDonald", "DeAndre",
 * "LeQueen"), and so does a lower-case start ("iDubbbz"). */
static inline gboolean
camel_compound (const HzScan *scan, const HzToken *t)
{
  /* mixed case: neither all lower nor all upper, and no word of the lists as a whole (most
   * tokens stop here) */
  const guint64 known = HZ_WB (HZ_W_GIVEN) | HZ_WB (HZ_W_SURNAME) | HZ_WB (HZ_W_COMMON) | HZ_WB (HZ_W_PLACE)
                        | HZ_WB (HZ_W_CITY);
  if ((t->flags & (HZ_TOK_UPPER | HZ_TOK_LOWER | HZ_TOK_NONASCII)) || !(t->flags & HZ_TOK_ALPHA) || t->nchars < 5
      || (t->cls & known))
    return FALSE;
  const char *x = scan->text + t->s;
  gsize n = t->e - t->s, k = 1;
  if (!g_ascii_isupper (x[0]))
    return FALSE;
  while (k < n && !g_ascii_isupper (x[k]))
    k++;
  if (k >= n || k < 3)
    return FALSE;
  guint64 cls = hz_lex_lookup (&scan->r->lex, x, k);
  return (cls & (HZ_WB (HZ_W_COMMON) | HZ_WB (HZ_W_NOT_NAME))) != 0;
}

/* A stage name that starts at token i with a prefix such as "Lil" or "DJ" ("Lil Yachty",
 * "lil wayne", "DJ Switch"): the token index after it, or i when there is none. The words
 * after the prefix are capitalised ones, or one lower-case word that is no English word. */
static guint
stage_name_end (const HzScan *scan, guint i)
{
  if (!hz_tok_in (&scan->toks[i], HZ_W_STAGE_PREFIX))
    return i;
  guint j = i + 1;
  while (j < scan->n_toks && j < i + 4 && tight (scan, &scan->toks[j - 1], &scan->toks[j]))
    {
      const HzToken *u = &scan->toks[j];
      if (!(u->flags & HZ_TOK_ALPHA) || handle_or_tag (scan, u) || hz_tok_in (u, HZ_W_ORG)
          || hz_tok_in (u, HZ_W_NOT_NAME))
        break;
      if (u->flags & HZ_TOK_LOWER)
        {
          if (j == i + 1 && u->nchars >= 3 && !(u->cls & (lower_stop | HZ_WB (HZ_W_COMMON))))
            j++;
          break;
        }
      /* past the first word only names continue it ("Lil Darth Vader", not "DJ Switch Now") */
      if (j > i + 1 && (u->cls & HZ_WB (HZ_W_COMMON)) && !(u->cls & (HZ_WB (HZ_W_GIVEN) | HZ_WB (HZ_W_SURNAME))))
        break;
      j++;
      if (word_end (scan, u) != u->e)
        break;
    }
  return j > i + 1 ? j : i;
}

/* Between tokens i and i + 1 there are only spaces and one character of `marks` (a list's
 * separator: "Walsall , Melbourne", "Salem, New Jersey"). */
static gboolean
sep_between (const HzScan *scan, guint i, const char *marks)
{
  if (i + 1 >= scan->n_toks)
    return FALSE;
  guint n = 0;
  for (gsize p = scan->toks[i].e; p < scan->toks[i + 1].s; p++)
    {
      char c = scan->text[p];
      if (c == ' ')
        continue;
      if (c == '\0' || !strchr (marks, c) || ++n > 1)
        return FALSE;
    }
  return n == 1;
}

/* Token i is a capitalised known place: in the place list, or in the city list and no
 * person's name. */
static gboolean
known_place_tok (const HzScan *scan, guint i)
{
  const HzToken *t = &scan->toks[i];
  const guint64 nm = HZ_WB (HZ_W_GIVEN) | HZ_WB (HZ_W_SURNAME);
  return is_cap_word (t)
         && ((t->cls & HZ_WB (HZ_W_PLACE)) || ((t->cls & HZ_WB (HZ_W_CITY)) && !(t->cls & nm)));
}

/* Token i is "and" or "or". */
static gboolean
tok_and_or (const HzScan *scan, guint i)
{
  return i < scan->n_toks && (hz_token_is (scan, &scan->toks[i], "and") || hz_token_is (scan, &scan->toks[i], "or"));
}

/* The run [i, j) is an item of a list of places: the item before or after it, joined by a
 * comma, '&', '/', "and" or "or", is a known place ("Walsall , Melbourne , Luton and
 * London"). */
static gboolean
in_place_list (const HzScan *scan, guint i, guint j)
{
  return (i >= 1 && sep_between (scan, i - 1, ",&/") && known_place_tok (scan, i - 1))
         || (i >= 2 && tok_and_or (scan, i - 1) && known_place_tok (scan, i - 2))
         || (j < scan->n_toks && sep_between (scan, j - 1, ",&/") && known_place_tok (scan, j))
         || (j + 1 < scan->n_toks && tok_and_or (scan, j) && known_place_tok (scan, j + 1));
}

/* A comma and a state, province or country of the place list right after token j - 1,
 * ending there: the run before it is a place ("Paxton , Illinois", "Hesse, Germany"; not
 * "Paxton, Illinois State University"). */
static gboolean
region_after (const HzScan *scan, guint j)
{
  if (j == 0 || j >= scan->n_toks || !sep_between (scan, j - 1, ",") || !is_cap_word (&scan->toks[j]))
    return FALSE;
  guint k = place_match (scan, j, MIN (scan->n_toks, j + 4));
  if (k == 0)
    return FALSE;
  gsize s = scan->toks[j].s, e = word_end (scan, &scan->toks[j + k - 1]);
  if (!(hz_lex_lookup (&scan->r->lex, scan->text + s, e - s) & HZ_WB (HZ_W_PLACE)))
    return FALSE;
  guint z = j + k;
  return z >= scan->n_toks || !tight (scan, &scan->toks[z - 1], &scan->toks[z])
         || !(scan->toks[z].flags & (HZ_TOK_CAP | HZ_TOK_UPPER));
}

/* The run starting at token a follows a noun of a thing or group after a determiner, with
 * at most one word between ("the band Deadsy", "the rock band Korn", "their song Hunter"). */
static gboolean
thing_noun_before (const HzScan *scan, guint a)
{
  if (a < 2 || !(scan->toks[a - 1].flags & HZ_TOK_LOWER) || !tight (scan, &scan->toks[a - 1], &scan->toks[a]))
    return FALSE;
  return (tok_in (scan, a - 2, HZ_W_DETERMINER)
          || (a >= 3 && (scan->toks[a - 2].flags & HZ_TOK_LOWER) && tok_in (scan, a - 3, HZ_W_DETERMINER)))
         && tok_among (scan, a - 1, thing_nouns);
}

/* Bytes [p, q) hold spaces and one quotation mark ('"', U+201C or U+201D) as their last
 * (`last`) or first (!`last`) character that is no space. */
static gboolean
quote_in_gap (const char *x, gsize p, gsize q, gboolean last)
{
  while (p < q && x[p] == ' ')
    p++;
  while (q > p && x[q - 1] == ' ')
    q--;
  if (p == q)
    return FALSE;
  if (last)
    return hz_quote_at (x, q, q - 1, FALSE) == 1 || (q - p >= 3 && hz_quote_at (x, q, q - 3, FALSE) == 3);
  return hz_quote_at (x, q, p, FALSE) != 0;
}

/* Token k can be a word of a title: capitalised, a number, or a lower-case function word. */
static gboolean
title_word (const HzScan *scan, guint k)
{
  const HzToken *t = &scan->toks[k];
  return (t->flags & (HZ_TOK_CAP | HZ_TOK_UPPER)) || !(t->flags & HZ_TOK_ALPHA)
         || ((t->flags & HZ_TOK_LOWER) && tok_among (scan, k, title_function_words));
}

/* The gap between tokens k and k + 1 stays inside a title: spaces, apostrophes, hyphens
 * ("Occam 's Razor", "Pac- Man"). */
static gboolean
title_gap (const HzScan *scan, guint k)
{
  for (gsize p = scan->toks[k].e; p < scan->toks[k + 1].s; p++)
    if (!strchr (" '-", scan->text[p]) || scan->text[p] == '\0')
      return FALSE;
  return TRUE;
}

/* The run [a, b) lies inside a quotation that reads as a title ("Fallen", "Buddha for
 * Mary", "O Hymno da Carta", “Tube Snake Boogie”): at most 8 words, the first capitalised
 * and each other one capitalised, a number or a lower-case function word. It names a work,
 * not a person, unless the quotation is the run alone and `lone_name` (a quoted given name
 * or surname that is no English word: "Anna", "Kessler"). */
static gboolean
in_quoted_title (const HzScan *scan, guint a, guint b, gboolean lone_name)
{
  enum { MAX_TITLE_WORDS = 8 };
  if (!scan->has['"'] && !scan->has[0xE2])
    return FALSE; /* no quotation mark in the text */
  const char *x = scan->text;
  guint i = a;
  while (!quote_in_gap (x, i > 0 ? scan->toks[i - 1].e : 0, scan->toks[i].s, TRUE))
    {
      if (i == 0 || b - i >= MAX_TITLE_WORDS || !title_gap (scan, i - 1) || !title_word (scan, i - 1))
        return FALSE;
      i--;
    }
  guint j = b;
  while (!quote_in_gap (x, scan->toks[j - 1].e, j < scan->n_toks ? scan->toks[j].s : scan->len, FALSE))
    {
      if (j >= scan->n_toks || j - i >= MAX_TITLE_WORDS || !title_gap (scan, j - 1) || !title_word (scan, j))
        return FALSE;
      j++;
    }
  return (scan->toks[i].flags & (HZ_TOK_CAP | HZ_TOK_UPPER)) != 0 && !(lone_name && i == a && j == b);
}

/* The token after the possessive that ends token j - 1 ("Macy's": j) or is token j ("Macy
 * 's", tokenised text: j + 1); 0 when there is none. */
static guint
after_possessive (const HzScan *scan, guint j)
{
  if (word_end (scan, &scan->toks[j - 1]) != scan->toks[j - 1].e)
    return j;
  return possessive_after (scan, j) ? j + 1 : 0;
}

/* The possessive that ends token j - 1 ("Macy's") or is token j ("Macy 's", tokenised
 * text) stands without its noun: punctuation, the end of the text or a function word
 * follows ("with Ivey 's and Hudson Belk", "Dillard 's was added"). Such a name is a shop's
 * or firm's. */
static gboolean
elliptical_possessive (const HzScan *scan, guint j)
{
  guint k = after_possessive (scan, j);
  if (!k)
    return FALSE;
  gsize p = scan->toks[k - 1].e;
  while (p < scan->len && scan->text[p] == ' ')
    p++;
  if (p >= scan->len || strchr (",.;:!?)", scan->text[p]))
    return scan->text[p] != '\0';
  return k < scan->n_toks && scan->toks[k].s == p && (scan->toks[k].flags & HZ_TOK_LOWER)
         && tok_among (scan, k, after_elliptical_possessive);
}

/* Decide what the capitalised run of tokens [a, b) is. */
static void
judge_run (HzScan *scan, guint a, guint b, gboolean shouting, gboolean informal)
{
  Word w[8];
  guint m = b - a;
  for (guint k = 0; k < m; k++)
    word_info (scan, &scan->toks[a + k], &w[k]);
  const HzToken *first = &scan->toks[a];

  gboolean title = a > 0 && hz_tok_in (&scan->toks[a - 1], HZ_W_TITLE)
                   && scan->toks[a].s - scan->toks[a - 1].e <= 2;
  /* the whole run is a (multi-word) place, before any trimming ("New Zealand") */
  if (m >= 2 && !title && place_match (scan, a, b) == m)
    {
      add (scan, scan->toks[a].s, w[m - 1].e, HZ_ENTITY_LOCATION, 0.75f, "place-gazetteer");
      return;
    }
  /* "Mill Village", "BASHALL TOWN": unknown words ending in a word for a settlement */
  if (m >= 2 && !title && hz_tok_in (&scan->toks[b - 1], HZ_W_PLACE_SUFFIX)
      && !hz_tok_in (&scan->toks[a], HZ_W_NOT_NAME) && !(w[0].given && m == 2 && !hz_context_before (scan, a, 1, HZ_W_LOC_CUE)))
    {
      guint k0 = 0;
      while (k0 + 1 < m && w[k0].common && !w[k0].place)
        k0++;
      if (k0 + 1 < m)
        {
          add (scan, w[k0].s, w[m - 1].e, HZ_ENTITY_LOCATION, 0.55f, "place-suffix");
          return;
        }
    }
  /* "Hancock Brook", "Nagle Place", "Capitol Hill": a name ending in a word for a street or
   * landform is a place, unless it is a given name + surname ("Anna Hill") */
  if (m >= 2 && !title && (scan->toks[b - 1].flags & HZ_TOK_CAP)
      && (hz_tok_in (&scan->toks[b - 1], HZ_W_ST_SUFFIX) || hz_tok_in (&scan->toks[b - 1], HZ_W_PLACE_SUFFIX))
      && !(w[0].given && w[m - 1].sur && !tok_among (scan, b - 1, street_abbrevs))
      && !hz_tok_in (&scan->toks[a], HZ_W_NOT_NAME))
    {
      guint k0 = 0;
      while (k0 + 1 < m && w[k0].common && !w[k0].place)
        k0++;
      /* a street word ("Place", "Loop") names a street, a landform word a place */
      if (k0 + 1 < m)
        add (scan, w[k0].s, w[m - 1].e,
             hz_tok_in (&scan->toks[b - 1], HZ_W_ST_SUFFIX) && !hz_tok_in (&scan->toks[b - 1], HZ_W_PLACE_SUFFIX)
               ? HZ_ENTITY_STREET_ADDRESS : HZ_ENTITY_LOCATION,
             0.45f, "place-suffix");
      return;
    }
  /* team, facility and unit names ("FC Basel", "Camp Howe") */
  if (hz_tok_in (&scan->toks[a], HZ_W_ORG_BEFORE) && m >= 2 && !title)
    return;
  gboolean cue = hz_context_before (scan, a, 2, HZ_W_NAME_CUE);
  /* an organisation word inside or right after the run: not a person */
  gboolean org = FALSE;
  for (guint k = 0; k < m && !org; k++)
    org = hz_tok_in (&scan->toks[a + k], HZ_W_ORG) && k > 0;
  /* (not a lower-case word after a possessive: "Mary's house", "Belgrano's army") */
  if (b < scan->n_toks && hz_tok_in (&scan->toks[b], HZ_W_ORG) && tight (scan, &scan->toks[b - 1], &scan->toks[b])
      && !((scan->toks[b].flags & HZ_TOK_LOWER) && word_end (scan, &scan->toks[b - 1]) != scan->toks[b - 1].e))
    org = TRUE;
  /* ... except after a title ("Dr. Helen Lake"), and a given name + a surname that is such a
   * word ("James Park", "Oscar Street") where no place cue comes before ("on Grace Street")
   * and no organisation word after ("James Park Hotel") */
  else if (org && (title || (m == 2 && w[0].given && w[1].sur && !hz_context_before (scan, a, 1, HZ_W_LOC_CUE)
                             && !hz_context_before (scan, a, 1, HZ_W_LOC_CUE_WEAK)
                             && !(a > 0 && hz_token_is (scan, &scan->toks[a - 1], "on")))))
    org = FALSE;
  gboolean the_before = a > 0 && hz_token_is (scan, &scan->toks[a - 1], "the");

  /* a single word opening a sentence is followed by what follows the subject of a sentence
   * about a person: a verb of people, an auxiliary ("should"), a copula that does not
   * describe a place or firm, or a comma and "you" (addressed) */
  gboolean subject = m == 1 && (first->flags & HZ_TOK_SENT) && !shouting
                     && ((w[0].given_freq && w[0].common) || (!w[0].common && !w[0].given && !w[0].place && !w[0].city))
                     && (verb_after (scan, b) || tok_in (scan, b, HZ_W_MODAL) || vocative (scan, b)
                         || (tok_is_copula (scan, b) && !hz_names_describes_thing (scan, b)));
  /* a frequent given name that is also a word, alone and capitalised: in chat text ("miss
   * Rusty"), or opening a sentence as its subject ("Bill is so right", "Harry got shot");
   * kept for scoring below */
  gboolean chat_given = m == 1 && w[0].given_freq && w[0].common && !shouting && (first->flags & HZ_TOK_CAP)
                        && ((informal || scan->unfinished) || ((first->flags & HZ_TOK_SENT) && subject));
  /* a listed given name owning something named by a lower-case word ("at Peter's house",
   * "Peter 's car"), even one that is also a word (not "Grant 's Overland Campaign", nor
   * "at Miller's, the bar") */
  guint owned = m == 1 ? after_possessive (scan, b) : 0;
  gboolean possessed = m == 1 && w[0].given && !w[0].place && owned && owned < scan->n_toks
                       && (scan->toks[owned].flags & HZ_TOK_LOWER) && (scan->toks[owned].flags & HZ_TOK_ALPHA)
                       && tight (scan, &scan->toks[owned - 1], &scan->toks[owned])
                       && !(hz_lex_lookup (&scan->r->lex, scan->text + w[0].s, w[0].e - w[0].s)
                            & (HZ_WB (HZ_W_MONTH) | HZ_WB (HZ_W_WEEKDAY) | HZ_WB (HZ_W_CALENDAR)));
  /* trim ordinary capitalised words at the start ("Hello", "When", "Directed") */
  guint lo = 0, hi = m;
  /* leading titles and ranks are cues, not part of the name ("Brigadier General Ross Hoyt") */
  while (lo + 1 < hi && hz_tok_in (&scan->toks[a + lo], HZ_W_TITLE))
    {
      lo++;
      title = TRUE;
    }
  while (lo < hi)
    {
      Word *x = &w[lo];
      gboolean keep = x->initial ? (lo + 1 < hi)
                                 : (!x->common || title
                                    || (x->given && lo + 1 < hi && (!w[lo + 1].common || (w[lo + 1].sur_freq && lo + 2 == hi))
                                        && !((scan->toks[a + lo + 1].flags & HZ_TOK_UPPER)
                                             && scan->toks[a + lo + 1].nchars <= 4
                                             && !w[lo + 1].initial))
                                    || (x->given && lo + 1 == hi && hi == m && verb_after (scan, b))
                                    || (x->sur && m == 1 && !(scan->toks[a].flags & HZ_TOK_SENT))
                                    /* a salutation's name ("Dear Grace,", "Hi Mark", "hi Sunny,") */
                                    || (x->given && lo + 1 == hi && salutation_before (scan, a + lo))
                                    || chat_given || possessed);
      if (x->conn || hz_tok_in (&scan->toks[a + lo], HZ_W_NOT_NAME))
        keep = FALSE;
      if (keep)
        break;
      lo++;
      title = FALSE;
      cue = cue || (lo > 0 && hz_tok_in (&scan->toks[a + lo - 1], HZ_W_NAME_CUE));
    }
  while (hi > lo && ((w[hi - 1].common && !w[hi - 1].sur && !(hi - lo >= 2 && w[lo].given) && !chat_given
                      && !(hi - lo == 1 && hi == m && w[lo].given && verb_after (scan, b))
                      && !(hi - lo == 1 && w[lo].given && salutation_before (scan, a + lo))
                      && !possessed)
                     || w[hi - 1].conn
                     || (w[hi - 1].initial && hi - lo > 1 && hi == m)))
    hi--;
  if (lo >= hi)
    return;
  guint n = hi - lo;
  /* a month or weekday, unless it is addressed after a salutation ("Dear May,", "Hi June!") */
  gboolean addressed = n == 1 && salutation_before (scan, a + lo) && w[lo].given && scan->toks[a + lo].e < scan->len
                       && (scan->text[scan->toks[a + lo].e] == ',' || scan->text[scan->toks[a + lo].e] == '!');
  if (n_is_calendar (scan, a + lo, a + hi) && !title && !addressed)
    return;
  /* a lone title, nationality or interjection is not a name */
  if (n == 1 && (hz_tok_in (&scan->toks[a + lo], HZ_W_TITLE) || hz_tok_in (&scan->toks[a + lo], HZ_W_NOT_NAME)))
    return;
  gboolean lone_not_person = FALSE;
  if (n == 1 && !title)
    {
      const HzToken *t1 = &scan->toks[a + lo];
      /* field labels and cue words of the other recognizers ("Fax", "SSN", "Zip", "Apt") */
      const guint64 field = HZ_WB (HZ_W_PHONE_CUE) | HZ_WB (HZ_W_CARD_CUE) | HZ_WB (HZ_W_SSN_CUE)
                            | HZ_WB (HZ_W_CRED_KEY) | HZ_WB (HZ_W_ZIP_CUE) | HZ_WB (HZ_W_UNIT)
                            | HZ_WB (HZ_W_DOB_CUE) | HZ_WB (HZ_W_ADDR_CUE) | HZ_WB (HZ_W_MONTH)
                            | HZ_WB (HZ_W_WEEKDAY);
      if ((t1->cls & field) && !addressed)
        lone_not_person = TRUE;
      gsize tl = t1->e - t1->s;
      const char *ts = scan->text + t1->s;
      gboolean named = (t1->cls & (HZ_WB (HZ_W_GIVEN) | HZ_WB (HZ_W_SURNAME))) != 0;
      /* an acronym in ordinary text ("ACLU", "DJ"); one of three letters or fewer even
       * where it spells a name ("the MAC address", "SAM", "ED") */
      if ((t1->flags & HZ_TOK_UPPER) && !shouting && (t1->nchars <= 3 || (t1->nchars <= 6 && !named)))
        lone_not_person = TRUE;
      /* "Rankin 's Mill", "Occam 's Razor": the possessive belongs to a longer name */
      if (possessive_after (scan, a + lo + 1) && a + lo + 2 < scan->n_toks
          && (scan->toks[a + lo + 2].flags & HZ_TOK_CAP))
        lone_not_person = TRUE;
      /* "with Ivey 's and Hudson Belk", "became Macy 's in 2006": a shop or firm */
      if (!w[lo].given && a + lo + 1 == b && elliptical_possessive (scan, b))
        lone_not_person = TRUE;
      /* "Battle of Fredericksburg", "Hall of Fame", "Best of 2007": an English word before
       * "of" and a name or number opens a longer proper name */
      if (w[lo].common && a + lo + 2 < scan->n_toks && a + lo + 1 == b
          && hz_token_is (scan, &scan->toks[b], "of")
          && (is_cap_word (&scan->toks[b + 1]) || (scan->toks[b + 1].flags & HZ_TOK_DIGIT)))
        lone_not_person = TRUE;
      /* "the Longhorns", "the Triffids": a plural after "the" names a team or group */
      if (a + lo > 0 && hz_token_is (scan, &scan->toks[a + lo - 1], "the") && tl > 3 && ts[tl - 1] == 's')
        lone_not_person = TRUE;
      /* "a Lamborghini", "your Tesla videos", "my Casio": a word outside the name lists
       * right after an article or possessive names a thing (people's names there are in
       * the lists: "a Trump supporter") */
      if (!named && !title && a + lo > 0 && tok_in (scan, a + lo - 1, HZ_W_DETERMINER))
        lone_not_person = TRUE;
      /* adjectives of peoples and places ("Victorian", "Slavic", "Queenslander") */
      if (!named && tl > 5
          && (has_suffix_len (ts, tl, "ian") || has_suffix_len (ts, tl, "ean")
              || has_suffix_len (ts, tl, "ese") || has_suffix_len (ts, tl, "ish")
              || has_suffix_len (ts, tl, "ic") || has_suffix_len (ts, tl, "ander")
              || has_suffix_len (ts, tl, "ians")))
        lone_not_person = TRUE;
    }
  for (guint k = lo; k < hi; k++)
    if (hz_tok_in (&scan->toks[a + k], HZ_W_NOT_NAME) && !title)
      return;
  /* the label of an identifier ("Aadhaar: 2345 6789 0124", "Codice Fiscale RSSMRA...") */
  if (!title && hz_names_identifier_label (scan, a + lo, a + hi))
    return;
  /* the name of a work or a group: "the band Deadsy", "their song Hunter" (not before a
   * verb of people or a full name: "the group Ilse Marquardt founded"), a quoted title
   * ("Fallen", "Buddha for Mary"; a quoted given name or surname that is no English word
   * stays a name: "Kessler") */
  if (!title && ((lo == 0 && thing_noun_before (scan, a) && !verb_after (scan, b) && !(m >= 2 && w[0].given))
                 || in_quoted_title (scan, a, b, m == 1 && (w[0].given || w[0].sur) && !w[0].common)))
    return;
  Word *f = &w[lo], *l = &w[hi - 1];
  gsize s = f->s, e = l->e;
  gboolean sent = (scan->toks[a + lo].flags & HZ_TOK_SENT) != 0;
  (void) first;

  /* a word of the (small) city list followed by a verb of people ("Belgrano accepted",
   * "Castro attained"): a surname, not the town of that name; copulas ("Salem is") are
   * said of places too and do not decide */
  if (n == 1 && f->city_only && (verb_after (scan, a + hi) || (possessive_after (scan, a + hi) && a + hi + 1 < scan->n_toks
                                                                && (scan->toks[a + hi + 1].flags & HZ_TOK_LOWER))))
    f->place = f->city = FALSE;
  /* places first: whole run in the place gazetteer */
  guint pm = f->city || f->place || n > 1 ? place_match (scan, a + lo, a + hi) : 0;
  if (pm == n && !title && !(cue && f->given && n == 1 && !f->place))
    {
      add (scan, s, e, HZ_ENTITY_LOCATION, 0.75f, "place-gazetteer");
      return;
    }
  /* a place by its context: "the town of Bridgton", "Paxton , Illinois" (one word that is no
   * given name: not "Rajesh Kumar, India"), "Walsall , Melbourne , Luton and London" */
  if (!title && n <= 4 && !(n >= 2 && f->given)
      && ((lo == 0 && after_prep_of (scan, a, "of", place_of_nouns))
          || (n == 1 && !f->given && hi == m && region_after (scan, b))
          || (n == 1 && (f->city || (!f->given && !f->sur && !f->common && (scan->toks[a + lo].flags & HZ_TOK_CAP)))
              && in_place_list (scan, a + lo, a + hi))))
    {
      add (scan, s, e, HZ_ENTITY_LOCATION, 0.6f, "place-context");
      return;
    }
  if (org)
    return;
  /* "from Hawkins, Richardson and Santana": a firm named after its partners */
  if (n == 1 && hz_names_firm_of_partners (scan, a + lo))
    return;

  /* a single unknown word right after "in", "near", ... is a place, not a person; after
   * "from", "to", "at" only a known place is */
  gboolean loc_cue = !sent && hz_context_before (scan, a + lo, 1, HZ_W_LOC_CUE) && !title
                     && !hz_names_to_person (scan, a + lo);
  gboolean weak_loc_cue = !sent && !title && (loc_cue || hz_context_before (scan, a + lo, 1, HZ_W_LOC_CUE_WEAK));

  /* "in Florence", "from Salem": a city name after a place cue */
  /* ... but "to Logan", "at Gary": a given name that is only a smaller city is a person
   * after a preposition that also takes people */
  gboolean person_prep = a + lo > 0 && (hz_token_is (scan, &scan->toks[a + lo - 1], "to")
                                        || hz_token_is (scan, &scan->toks[a + lo - 1], "at"));
  if (n == 1 && weak_loc_cue && (f->city || f->place) && !(f->given && f->city_only && person_prep))
    {
      add (scan, s, e, HZ_ENTITY_LOCATION, 0.6f, "place-cue");
      return;
    }

  /* "in SUND", "arrived at HART": an ALL-CAPS word in ordinary text after a place cue is a
   * place name written the way addresses write towns */
  if (n <= 3 && !shouting
      && (loc_cue || (!sent && !title && a + lo > 0 && hz_token_is (scan, &scan->toks[a + lo - 1], "at"))))
    {
      gboolean caps = !f->given; /* "to MARA QUINLEY" is a person */
      for (guint k = lo; k < hi && caps; k++)
        caps = (scan->toks[a + k].flags & HZ_TOK_UPPER) && scan->toks[a + k].nchars >= 4;
      if (caps)
        {
          add (scan, s, e, HZ_ENTITY_LOCATION, 0.5f, "place-cue");
          return;
        }
    }

  int unknown = 0, commons = 0, givens = 0, surs = 0, initials = 0;
  for (guint k = lo; k < hi; k++)
    {
      unknown += !w[k].given && !w[k].sur && !w[k].common && !w[k].place && !w[k].initial && !w[k].conn;
      commons += w[k].common && !w[k].given && !w[k].sur;
      givens += w[k].given;
      surs += w[k].sur;
      initials += w[k].initial || w[k].conn;
    }
  float score = 0;
  if (title)
    score = 0.9f;
  else if (n >= 2 && (f->given || f->initial) && (l->sur || !l->common) && commons == 0)
    score = 0.85f;
  else if (n >= 2 && commons == 0 && (l->sur || f->given) && !shouting)
    score = 0.7f;
  else if (n >= 2 && commons == 0 && !shouting && unknown + givens + surs + initials >= (int) n
           && unknown + givens + surs >= 2 && !(loc_cue && !f->given && initials == 0))
    score = the_before ? 0.35f : 0.55f;
  else if (n == 1 && f->given && !f->common && !f->place)
    score = sent ? 0.5f : 0.6f;
  else if (n == 1 && cue && !f->common && !shouting && !(loc_cue && !f->given && !f->sur))
    score = 0.5f;
  else if (n == 1 && f->given && f->common && !f->place && (strong_cue_before (scan, a + lo) || possessed))
    score = 0.5f; /* "named him Frank", "Hi Will", "at Peter's house" */
  else if (n == 1 && f->given && f->common && !f->place && !shouting && verb_after (scan, a + hi))
    score = 0.5f; /* "Lily met", "Mark said": a given name that is also a word, before a verb of people */
  else if (n == 1 && !f->common && !f->place && !shouting && (f->sur || unknown) && !loc_cue
           && (coordinated (scan, a + lo) || speaker_label (scan, a + lo)
               || possessive_after (scan, a + hi)
               || (a + hi < scan->n_toks && hz_tok_in (&scan->toks[a + hi], HZ_W_VERB_AFTER)
                   && !hz_token_is (scan, &scan->toks[a + hi], "and") && !hz_names_describes_thing (scan, a + hi))))
    score = 0.5f; /* "Marrero and Murphy were", "Ubul: ...", "Enrico shouted" */
  else if (n == 1 && informal && !sent && !f->common && !f->place && !f->city && !loc_cue
           && (scan->toks[a + lo].flags & HZ_TOK_CAP) && scan->toks[a + lo].nchars >= 3)
    score = 0.35f; /* chat text capitalises little else than names */
  else if (m == 1 && sent && (informal || scan->unfinished) && !shouting && !f->common && !f->place && !f->city
           && !f->initial && (scan->toks[a + lo].flags & HZ_TOK_CAP) && (scan->toks[a + lo].flags & HZ_TOK_ALPHA)
           && scan->toks[a + lo].nchars >= 3 && !(scan->toks[a + lo].flags & HZ_TOK_NONASCII)
           && !memchr (scan->text + s, '\'', e - s) && !memchr (scan->text + s, '-', e - s)
           && a + hi == b && subject)
    score = 0.4f; /* a word outside every list opening a chat message before a verb ("Niskanen
                   * should have", "Fedorova stated") or addressed ("Loey, do you") */
  else if (chat_given && !f->place && !weak_loc_cue && !the_before && (!sent || subject))
    score = 0.35f; /* a frequent given name that is also a word, capitalised in chat text ("miss
                    * Rusty", "Harry got shot") */
  else if (m == 1 && scan->unfinished && !sent && !f->common && !f->place && !f->city && !weak_loc_cue && !the_before
           && !f->given && !f->sur && (scan->toks[a + lo].flags & HZ_TOK_CAP)
           && !(scan->toks[a + lo].flags & HZ_TOK_NONASCII) && scan->toks[a + lo].nchars >= 3
           && !hz_tok_in (&scan->toks[a + lo], HZ_W_ORG))
    score = 0.35f; /* a message without final punctuation is chat-like too ("thanks for it Ozzie") */
  else if (n == 1 && f->sur && !f->common && !sent && !f->place && !shouting
           && (scan->toks[a + lo].flags & HZ_TOK_CAP))
    score = 0.4f;
  else if (m == 1 && f->sur && f->common && !sent && !f->place && !shouting && !the_before
           && !weak_loc_cue && (scan->toks[a + lo].flags & HZ_TOK_CAP) && !informal)
    score = 0.35f; /* a surname that is also a word, capitalised inside a sentence ("said Baker");
                    * not in chat text, which capitalises words at will ("watched it all Day") */
  if (cue && score > 0)
    score = MIN (1.0f, score + 0.15f);
  if (score > 0 && hi + a < scan->n_toks && hz_tok_in (&scan->toks[a + hi], HZ_W_VERB_AFTER))
    score = MIN (1.0f, score + 0.1f);
  if (lone_not_person)
    score = 0;
  if (score > 0)
    {
      /* a given name followed by a lower-case surname ("Kylie minogue"; in chat text any
       * word that is no English word: "Mauro renallo") */
      if (l->given && n == 1 && a + hi == b && e == scan->toks[b - 1].e)
        {
          guint j = lower_surname_after (scan, b, informal);
          if (j > b)
            e = word_end (scan, &scan->toks[j - 1]);
        }
      add (scan, s, e, HZ_ENTITY_PERSON, score, "name");
      return;
    }
  /* a single unknown capitalised word after "in", "from", "to": a place */
  if (n <= 4 && unknown + initials >= (int) n && unknown >= 1 && !shouting && loc_cue)
    add (scan, s, e, HZ_ENTITY_LOCATION, 0.45f, "place-cue");
  else if (pm > 0)
    add (scan, s, w[lo + pm - 1].e, HZ_ENTITY_LOCATION, 0.6f, "place-gazetteer");
}

/* Lower-case (or otherwise uncapitalised) names: given+surname pairs, or a word after a
 * strong cue. */
static guint
judge_lower (HzScan *scan, guint i)
{
  const HzToken *t = &scan->toks[i];
  Word a, b;
  /* most lower-case words are ordinary words: decide from the class bits first */
  if ((t->cls & HZ_WB (HZ_W_COMMON)) && !(t->cls & HZ_WB (HZ_W_GIVEN)) && word_end (scan, t) == t->e)
    return i + 1;
  /* text without any capital letter: places from the place gazetteer ("from switzerland",
   * "barra de carrasco"); an ordinary word or a city that is also a name needs a cue */
  if (scan->all_lower && (t->cls & (HZ_WB (HZ_W_PLACE) | HZ_WB (HZ_W_CITY) | HZ_WB (HZ_W_PLACE_HEAD))))
    {
      guint end = i + 1;
      while (end < scan->n_toks && end < i + 4 && tight (scan, &scan->toks[end - 1], &scan->toks[end]))
        end++;
      guint pm = place_match (scan, i, end);
      gboolean cue = i > 0 && (hz_tok_in (&scan->toks[i - 1], HZ_W_LOC_CUE) || hz_tok_in (&scan->toks[i - 1], HZ_W_LOC_CUE_WEAK));
      if (pm == 0 && cue && hz_tok_in (t, HZ_W_CITY) && !(t->cls & HZ_WB (HZ_W_COMMON)))
        pm = 1; /* "to kiel": a city that is also a surname, after a cue */
      if (pm > 0 && (pm > 1 || cue || !(t->cls & HZ_WB (HZ_W_COMMON))))
        {
          add (scan, t->s, word_end (scan, &scan->toks[i + pm - 1]), HZ_ENTITY_LOCATION, 0.5f, "place-lower");
          return i + pm;
        }
    }
  /* cue words of any recognizer are never lower-case names ("ping mara" is a cue + name) */
  if (t->cls & lower_stop)
    return i + 1;
  word_info (scan, t, &a);
  if (a.common && !a.given)
    return i + 1;
  if (a.given && !a.common && a.e == t->e)
    {
      /* given name + surname ("olga krylova", "benjamin a seiler"); a word outside every
       * list counts as a surname in chat text or when the text has no capitals at all */
      guint j = lower_surname_after (scan, i + 1, scan->informal || scan->all_lower);
      if (j > i + 1)
        {
          word_info (scan, &scan->toks[j - 1], &b);
          add (scan, a.s, b.e, HZ_ENTITY_PERSON, 0.55f, "name-lower");
          return j;
        }
    }
  /* after a strong cue: a given name; after a greeting or thanks ("thanks obama", "hey
   * tanner") also a frequent given name that is also a word, or a word outside the lists
   * ("love", "called" take things too: "love dis") */
  static const char *const takes_things[] = { "love", "called", "named", "name", NULL };
  if (i > 0 && hz_tok_in (&scan->toks[i - 1], HZ_W_STRONG_CUE) && a.e == t->e && t->nchars >= 3
      && ((a.given && !a.common)
          || (!tok_among (scan, i - 1, takes_things)
              && ((a.given_freq && !a.place) || (!a.given && !a.common && !a.place && !a.sur)))))
    {
      add (scan, a.s, a.e, HZ_ENTITY_PERSON, 0.55f, "name-cue");
      return i + 1;
    }
  /* informal text: a lower-case given name that is no English word, place or interjection */
  gboolean det = i > 0 && (hz_token_is (scan, &scan->toks[i - 1], "the") || hz_token_is (scan, &scan->toks[i - 1], "a")
                           || hz_token_is (scan, &scan->toks[i - 1], "an") || hz_token_is (scan, &scan->toks[i - 1], "my")
                           || hz_token_is (scan, &scan->toks[i - 1], "this") || hz_token_is (scan, &scan->toks[i - 1], "your"));
  if (a.given && !a.common && !a.place && t->nchars >= 4 && !det)
    add (scan, a.s, a.e, HZ_ENTITY_PERSON, 0.4f, "name-lower");
  /* chat text: a word outside every list opening a sentence as the subject of a verb of
   * people, an auxiliary or a copula ("momo is the best", "hangwani is slaying") */
  else if ((scan->informal || scan->all_lower) && (t->flags & HZ_TOK_SENT) && !a.given && !a.common && !a.place && !a.city
           && t->nchars >= 4 && a.e == t->e
           && (verb_after (scan, i + 1) || tok_in (scan, i + 1, HZ_W_MODAL)
               || (tok_is_copula (scan, i + 1) && !hz_names_describes_thing (scan, i + 1))))
    add (scan, a.s, a.e, HZ_ENTITY_PERSON, 0.35f, "name-lower");
  return i + 1;
}

/* Token i can be a name joined to a found one by "and" or "&" ("emma and kaite", "Jay &
 * Trish"): a word of three letters or more that is no English word (a given name may be),
 * place, cue word, handle or camel-case compound, written like the found name (capitalised
 * or lower case). */
static gboolean
coordinate_name (const HzScan *scan, guint i, const HzToken *found)
{
  if (i >= scan->n_toks)
    return FALSE;
  const HzToken *t = &scan->toks[i];
  guint16 cf = (found->flags & HZ_TOK_LOWER) ? HZ_TOK_LOWER : HZ_TOK_CAP;
  if (!(t->flags & HZ_TOK_ALPHA) || !(t->flags & cf) || t->nchars < 3 || (t->cls & lower_stop)
      || (t->cls & (HZ_WB (HZ_W_PLACE) | HZ_WB (HZ_W_CITY))) || handle_or_tag (scan, t) || camel_compound (scan, t))
    return FALSE;
  if ((t->cls & HZ_WB (HZ_W_COMMON)) && !(t->cls & HZ_WB (HZ_W_GIVEN_FREQ)))
    return FALSE;
  /* not the first word of something longer ("Atlantic City", "Williamson Orchestra",
   * "Király u. 15") */
  if (i + 1 < scan->n_toks && scan->toks[i + 1].s - t->e <= 2
      && ((scan->toks[i + 1].flags & (HZ_TOK_CAP | HZ_TOK_UPPER | HZ_TOK_DIGIT))
          || (scan->toks[i + 1].cls & (HZ_WB (HZ_W_ST_SUFFIX) | HZ_WB (HZ_W_PLACE_SUFFIX)))))
    return FALSE;
  return word_end (scan, t) == t->e;
}

/* Only " and " or " & " (one space each side) between tokens a and b. */
static gboolean
joined_by_and (const HzScan *scan, guint a, guint b)
{
  if (b != a + 1 && b != a + 2)
    return FALSE;
  if (b == a + 2)
    return hz_token_is (scan, &scan->toks[a + 1], "and") && tight (scan, &scan->toks[a], &scan->toks[a + 1])
           && tight (scan, &scan->toks[a + 1], &scan->toks[b]);
  const char *x = scan->text;
  return scan->toks[b].s - scan->toks[a].e == 3 && x[scan->toks[a].e] == ' ' && x[scan->toks[a].e + 1] == '&'
         && x[scan->toks[a].e + 2] == ' ';
}

/* Names joined by "and" / "&" to a name found with some confidence (one pass over the
 * candidates found so far in this text; each adds at most one name on each side). */
static void
coordinated_names (HzScan *scan, guint first_cand)
{
  guint end = scan->cands->len;
  for (guint c = first_cand; c < end; c++)
    {
      HzCand k = g_array_index (scan->cands, HzCand, c);
      if (k.type != HZ_ENTITY_PERSON || k.score < 0.4f)
        continue;
      guint a = hz_token_at_or_after (scan, k.s), b = hz_token_at_or_after (scan, k.e);
      if (a >= b || b > scan->n_toks)
        continue;
      const HzToken *found = &scan->toks[a];
      for (guint j = b; j <= b + 1 && j < scan->n_toks; j++)
        if (joined_by_and (scan, b - 1, j) && coordinate_name (scan, j, found))
          hz_scan_add (scan, scan->toks[j].s, scan->toks[j].e, HZ_ENTITY_PERSON, 0.4f, HZ_TIER_NAME, "name-coord");
      for (guint j = a >= 2 ? a - 2 : 0; j < a; j++)
        if (joined_by_and (scan, j, a) && coordinate_name (scan, j, found))
          hz_scan_add (scan, scan->toks[j].s, scan->toks[j].e, HZ_ENTITY_PERSON, 0.4f, HZ_TIER_NAME, "name-coord");
    }
}

/* A name to look for again: its first word's hash, where it was found, its byte length, and
 * whether it is a lone surname (then the whole token must match). */
typedef struct {
  guint64 h;
  gsize s, n;
  float score;
  gboolean word_only;
  /* a name that is also an English word or a month, found capitalised ("Dear May,",
   * "Thanks Will"): only its capitalised repeats inside a sentence and not after a place
   * or time preposition count ("you may leave", "Will you come?", "in May" are words) */
  gboolean cased;
} Repeat;

/* The name's token t is also a word or a month and is written capitalised. */
static gboolean
word_like_name (const HzToken *t)
{
  return (t->cls & (HZ_WB (HZ_W_COMMON) | HZ_WB (HZ_W_MONTH) | HZ_WB (HZ_W_WEEKDAY) | HZ_WB (HZ_W_CALENDAR)))
         && (t->flags & (HZ_TOK_CAP | HZ_TOK_UPPER));
}

static int
repeat_cmp (gconstpointer a, gconstpointer b)
{
  const Repeat *x = a, *y = b;
  return x->h < y->h ? -1 : x->h > y->h;
}

/* Hash of the lower-cased first word of bytes [s, s + n), as hz_tokenize computes it. */
static guint64
first_word_hash (const HzScan *scan, gsize s, gsize n)
{
  gsize w = 0;
  while (w < n && scan->text[s + w] != ' ')
    w++;
  char buf[64];
  gsize kn;
  return hz_lex_key (scan->text + s, w, buf, sizeof buf, &kn);
}

/* a LOCATION guessed from a cue alone ("to X", "in X"; recognizer "place-cue") */
static gboolean
is_cue_place (const HzCand *k)
{
  return k->type == HZ_ENTITY_LOCATION && k->rec && strcmp (k->rec, "place-cue") == 0;
}

/* Other occurrences, in any case, of the names found so far (whole words only), and the
 * surname of a full name on its own. One pass over the tokens: each token's hash is looked
 * up (binary search) among the hashes of the names' first words. */
static void
propagate (HzScan *scan, guint first_cand)
{
  guint end = scan->cands->len;
  if (end == first_cand)
    return;
  enum { MAX_NAMES = 256 };
  /* at most two patterns per name (the name, its surname): on the stack, no allocation */
  Repeat pats[2 * MAX_NAMES];
  guint n_pats = 0;
  guint64 seen[MAX_NAMES];
  guint n_seen = 0;
  for (guint c = first_cand; c < end && n_seen < MAX_NAMES; c++)
    {
      HzCand k = g_array_index (scan->cands, HzCand, c);
      if (k.type != HZ_ENTITY_PERSON || k.score < 0.5f || k.e - k.s > 80)
        continue;
      char buf[128];
      gsize kn;
      guint64 full = hz_lex_key (scan->text + k.s, k.e - k.s, buf, sizeof buf, &kn);
      gboolean dup = !full;
      for (guint q = 0; q < n_seen && !dup; q++)
        dup = seen[q] == full;
      if (dup)
        continue;
      seen[n_seen++] = full;
      guint a = hz_token_at_or_after (scan, k.s), b = hz_token_at_or_after (scan, k.e);
      Repeat r = { first_word_hash (scan, k.s, k.e - k.s), k.s, k.e - k.s, k.score * 0.9f, FALSE,
                   b == a + 1 && word_like_name (&scan->toks[a]) };
      if (r.h)
        pats[n_pats++] = r;
      if (b - a >= 2)
        {
          const HzToken *last = &scan->toks[b - 1];
          gsize ln = word_end (scan, last) - last->s;
          if (ln < 3 || (hz_lex_lookup (&scan->r->lex, scan->text + last->s, ln) & HZ_WB (HZ_W_COMMON)))
            continue;
          Repeat sr = { first_word_hash (scan, last->s, ln), last->s, ln, k.score * 0.8f, TRUE, FALSE };
          if (sr.h)
            pats[n_pats++] = sr;
        }
    }
  if (n_pats == 0)
    return;
  qsort (pats, n_pats, sizeof pats[0], repeat_cmp);
  const Repeat *P = pats;
  /* tokens inside a candidate already found are not searched again: keeps the number of
   * candidates linear in the text (a long text repeating a few names) */
  guint8 cov_stack[1024];
  guint8 *cov = scan->n_toks + 1 <= sizeof cov_stack ? cov_stack : g_malloc (scan->n_toks + 1);
  memset (cov, 0, scan->n_toks + 1);
  /* ... except a place guessed from its cue alone ("say hello to Quenby"): a repeat of a
   * name found in the text is that person (the place guess is dropped below) */
  gboolean guessed_place = FALSE;
  for (guint c = 0; c < scan->cands->len; c++)
    {
      const HzCand *k = &g_array_index (scan->cands, HzCand, c);
      if (is_cue_place (k))
        {
          guessed_place = TRUE;
          continue;
        }
      for (guint ti = hz_token_at_or_after (scan, k->s); ti < scan->n_toks && scan->toks[ti].s < k->e; ti++)
        cov[ti] = 1;
    }
  guint n_before = scan->cands->len;
  for (guint ti = 0; ti < scan->n_toks; ti++)
    {
      const HzToken *t = &scan->toks[ti];
      if (!(t->flags & HZ_TOK_ALPHA) || cov[ti])
        continue;
      guint64 h = t->hash;
      gsize we = word_end (scan, t);
      if (we != t->e)
        {
          char buf[64];
          gsize kn;
          h = hz_lex_key (scan->text + t->s, we - t->s, buf, sizeof buf, &kn);
        }
      if (!h)
        continue;
      guint lo = 0, hi = n_pats;
      while (lo < hi)
        {
          guint mid = (lo + hi) / 2;
          if (P[mid].h < h)
            lo = mid + 1;
          else
            hi = mid;
        }
      for (; lo < n_pats && P[lo].h == h; lo++)
        {
          const Repeat *r = &P[lo];
          gsize n = r->n;
          if (t->s == r->s || t->s + n > scan->len)
            continue;
          if (g_ascii_strncasecmp (scan->text + t->s, scan->text + r->s, n) != 0)
            continue;
          if (r->word_only ? we - t->s != n
                           : (hz_alnum_at (scan->text, scan->len, t->s + n) && scan->text[t->s + n] != '\''))
            continue;
          if (r->cased && (!(t->flags & (HZ_TOK_CAP | HZ_TOK_UPPER)) || (t->flags & HZ_TOK_SENT)
                           || (ti > 0 && (hz_tok_in (&scan->toks[ti - 1], HZ_W_LOC_CUE)
                                          || hz_tok_in (&scan->toks[ti - 1], HZ_W_LOC_CUE_WEAK)
                                          || hz_token_is (scan, &scan->toks[ti - 1], "on")))))
            continue;
          hz_scan_add (scan, t->s, t->s + n, HZ_ENTITY_PERSON, r->score, HZ_TIER_NAME, "name-repeat");
        }
    }
  if (cov != cov_stack)
    g_free (cov);
  if (!guessed_place || scan->cands->len == n_before)
    return;
  /* drop the place guesses that a repeat now covers */
  guint w = 0;
  for (guint c = 0; c < scan->cands->len; c++)
    {
      HzCand k = g_array_index (scan->cands, HzCand, c);
      gboolean covered = FALSE;
      for (guint q = n_before; q < scan->cands->len && is_cue_place (&k) && !covered; q++)
        {
          const HzCand *r = &g_array_index (scan->cands, HzCand, q);
          covered = r->s <= k.s && k.e <= r->e;
        }
      if (!covered)
        g_array_index (scan->cands, HzCand, w++) = k;
    }
  g_array_set_size (scan->cands, w);
}

void
hz_rec_names (HzScan *scan)
{
  if (!scan->r->enabled[HZ_ENTITY_PERSON] && !scan->r->enabled[HZ_ENTITY_LOCATION])
    return;
  gboolean shouting = is_shouting (scan);
  gboolean informal = is_informal (scan);
  scan->unfinished = !ends_like_prose (scan);
  scan->informal = informal;
  scan->all_lower = TRUE;
  for (guint k = 0; k < scan->n_toks && scan->all_lower; k++)
    scan->all_lower = !(scan->toks[k].flags & (HZ_TOK_CAP | HZ_TOK_UPPER));
  guint first_cand = scan->cands->len;
  guint i = 0, n = scan->n_toks;
  gboolean tags = scan->has['@'] || scan->has['#'];
  while (i < n)
    {
      const HzToken *t = &scan->toks[i];
      gsize me = scan->has['@'] && scan->r->enabled[HZ_ENTITY_PERSON] ? mention_end (scan, t) : 0;
      if (me)
        {
          add (scan, t->s, me, HZ_ENTITY_PERSON, 0.7f, HZ_REC_MENTION);
          while (i < n && scan->toks[i].s < me)
            i++;
          continue;
        }
      if ((tags && handle_or_tag (scan, t)) || camel_compound (scan, t))
        {
          i++;
          continue;
        }
      guint se = (t->cls & HZ_WB (HZ_W_STAGE_PREFIX)) ? stage_name_end (scan, i) : i;
      if (se > i)
        {
          add (scan, t->s, word_end (scan, &scan->toks[se - 1]), HZ_ENTITY_PERSON, 0.6f, "stage-name");
          i = se;
          continue;
        }
      gboolean capish = (t->flags & HZ_TOK_ALPHA) && (t->flags & (HZ_TOK_CAP | HZ_TOK_UPPER));
      if (!capish)
        {
          if ((t->flags & HZ_TOK_ALPHA) && (t->flags & HZ_TOK_LOWER) && t->nchars >= 2)
            i = judge_lower (scan, i);
          else
            i++;
          continue;
        }
      guint j = i + 1;
      while (j < n && j - i < 6 && tight (scan, &scan->toks[j - 1], &scan->toks[j]))
        {
          const HzToken *u = &scan->toks[j];
          gboolean ucap = (u->flags & HZ_TOK_ALPHA) && (u->flags & (HZ_TOK_CAP | HZ_TOK_UPPER));
          gboolean conn = (u->flags & HZ_TOK_LOWER) && hz_tok_in (u, HZ_W_NAME_CONN) && j + 1 < n
                          && (scan->toks[j + 1].flags & (HZ_TOK_CAP | HZ_TOK_UPPER));
          if ((!ucap && !conn) || (tags && handle_or_tag (scan, u)) || camel_compound (scan, u)
              || hz_names_field_label (scan, j))
            break;
          /* a possessive ends the run */
          if (word_end (scan, &scan->toks[j - 1]) != scan->toks[j - 1].e)
            break;
          j++;
        }
      judge_run (scan, i, j, shouting, informal);
      i = j;
    }
  if (scan->r->enabled[HZ_ENTITY_PERSON])
    {
      coordinated_names (scan, first_cand);
      propagate (scan, first_cand);
    }
}
