/* rec-names-lists.c — the word lists of the names family (rec-names*.c): titles, cues before
 * and after a name, organisation, place and calendar words, connectors, ... Every list is
 * registered in the lexicon (hz_names_lists), so a token's class bits say which lists hold
 * it; the few lists that are compared word by word (rare checks) are named in
 * rec-names-lists.h. */
#include "hz-recognizers.h"
#include "rec-names-lists.h"

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
const char *const hz_names_vocative_after[] = { "you", "your", "u", "ur", "do", "can", "could",
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
const char *const hz_names_to_person_words[] = {
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
const char *const hz_names_place_of_nouns[] = {
  "town", "city", "village", "hamlet", "township", "borough", "parish", "municipality", "commune",
  "county", "seat", "suburb", "province", "region", "state", "district", "capital", "port",
  "island", "isle", "kingdom", "republic", "duchy", "principality", "canton", "prefecture", NULL
};

/* Nouns of a thing or a group that its name follows ("the band Deadsy", "their song Hunter",
 * "the ship Mary Rose"): after a determiner, such a noun makes the name no person's.
 * Compared one by one (rare check). */
const char *const hz_names_thing_nouns[] = {
  "band", "group", "album", "song", "single", "film", "movie", "novel", "book", "magazine",
  "newspaper", "journal", "ship", "vessel", "company", "firm", "label", "brand", "show",
  "series", "game", "team", "club", "station", "channel", "airline", "restaurant", "hotel",
  "website", "app", "anthem", "opera", "musical", "poem", "painting", "episode", "festival",
  "tour", "car", "model", "engine", "horse", NULL
};

/* Participles said of firms, buildings and places after a copula ("Caloi was founded",
 * "Nyrstar was listed"), never of a person. Compared one by one (rare check). */
const char *const hz_names_thing_participles[] = {
  "founded", "established", "incorporated", "acquired", "headquartered", "listed", "merged",
  "formed", "manufactured", "built", "constructed", "demolished", "located", "situated", NULL
};

/* Words after an elliptical possessive, which names a shop or firm ("Ivey 's and Hudson
 * Belk", "Dillard 's was added", "became Macy 's in 2006"). Compared one by one (rare
 * check). */
const char *const hz_names_after_elliptical_possessive[] = {
  "and", "or", "in", "at", "was", "is", "became", "has", "had", "as", "on", "with", "which",
  "where", "to", "for", NULL
};

/* Street-type abbreviations that end a street's name even after a given name ("Collins
 * Ave", "Grant Blvd"). Compared one by one (rare check). */
const char *const hz_names_street_abbrevs[] = { "ave", "blvd", "rd", "st", "ln", "hwy", "pkwy", NULL };

/* Words that stay lower case inside a title ("Buddha for Mary", "Rock am Ring"). Compared
 * one by one (rare check). */
const char *const hz_names_title_function_words[] = {
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
