/* Recognizers and the analysis pipeline: each case lists every span expected in a text
 * (surface + type), so both misses and over-redaction fail. Fixed misses from the
 * evaluation data are kept here as regression cases (invented data). */
#include <gio/gio.h>
#include <string.h>
#include "hanzo/redact.h"

typedef struct {
  const char *text;
  const char *expect[8][2]; /* {surface, type}, NULL-terminated */
} Case;

static const Case cases[] = {
  /* e-mail is one span; the URL is separate */
  { "Write to nora.valdt@example.com or visit www.example.org today",
    { { "nora.valdt@example.com", "EMAIL" }, { "www.example.org", "URL" } } },
  { "mail me at a.b@c.invalidtld please", { { NULL } } },
  /* non-ASCII local parts (RFC 6531) are one span; quotes around an address are not in it */
  { "write to \xc5\xa1\xc3\xa1rka@example.cz today",
    { { "\xc5\xa1\xc3\xa1rka@example.cz", "EMAIL" } } },
  { "\xe2\x80\x9c" "bob@example.com\xe2\x80\x9d he said", { { "bob@example.com", "EMAIL" } } },
  { "see https://example.com/a?b=1).", { { "https://example.com/a?b=1", "URL" } } },
  /* phones, incl. extensions (fixed miss) and parentheses */
  { "Reach Ilse Brandvik\nat +1 202-555-0142, thanks",
    { { "Ilse Brandvik", "PERSON" }, { "+1 202-555-0142", "PHONE" } } },
  { "Fax: 345-899-3560x4587", { { "345-899-3560x4587", "PHONE" } } },
  { "call (579)888-3058 now", { { "(579)888-3058", "PHONE" } } },
  { "tel +41 (0)85 806 98 67", { { "+41 (0)85 806 98 67", "PHONE" } } },
  /* cards: 2-series Mastercard with spaces; timestamps are not cards or phones */
  { "card 2221 0000 0000 0009, log ts 1700000000004",
    { { "2221 0000 0000 0009", "CREDIT_CARD" } } },
  { "epoch 1700000000 and 1699999999999", { { NULL } } },
  { "JCB 3509413199654323 ok", { { "3509413199654323", "CREDIT_CARD" } } },
  { "maestro 060426070011", { { "060426070011", "CREDIT_CARD" } } },
  /* IBAN, spaced and lower case */
  { "IBAN GB82 WEST 1234 5698 7654 32.", { { "GB82 WEST 1234 5698 7654 32", "IBAN" } } },
  { "iban gb82west12345698765432", { { "gb82west12345698765432", "IBAN" } } },
  /* network */
  { "from 10.0.0.256 and 192.168.1.20/24", { { "192.168.1.20/24", "IP_ADDRESS" } } },
  { "host 2001:db8::8a2e:370:7334 up", { { "2001:db8::8a2e:370:7334", "IP_ADDRESS" } } },
  { "at 12:30:45 the mac 00:1A:2b:3C:4d:5E", { { "00:1A:2b:3C:4d:5E", "MAC_ADDRESS" } } },
  /* SSN rules */
  { "Here's my SSN: 460-89-9847", { { "460-89-9847", "US_SSN" } } },
  { "ssn 666-12-3456 is not valid", { { NULL } } },
  /* a voided number is no SSN, nor a name to the tagger (fixed false PERSON) */
  { "Wrong IBAN DE89 3704 0044 0532 0130 01 here.\nSSN 078-05-1120 is famous; 000-12-3456 is invalid.",
    { { NULL } } },
  /* the label of an identifier is no name, to the rules or the tagger (fixed false PERSON);
   * labels are the national ids' cue words: a name before a phone number stays a name
   * (fixed miss) */
  { "Aadhaar: 2345 6789 0124 and Steuer-ID 86095742719",
    { { "2345 6789 0124", "NATIONAL_ID" }, { "86095742719", "NATIONAL_ID" } } },
  { "My HETU is 131052-308T, Codice Fiscale: RSSMRA85T10A562S",
    { { "131052-308T", "NATIONAL_ID" }, { "RSSMRA85T10A562S", "NATIONAL_ID" } } },
  { "Please call Zorbin 555-867-5309 tomorrow.", { { "Zorbin", "PERSON" }, { "555-867-5309", "PHONE" } } },
  /* an acronym of up to three capitals is no name, even one that spells a name (fixed
   * false PERSON) */
  { "Send the MAC now, the SAM module failed", { { NULL } } },
  /* secrets */
  { "key sk-ant-abcdefghijklmnopqrstuvwxyz0123 leaked",
    { { "sk-ant-abcdefghijklmnopqrstuvwxyz0123", "SECRET" } } },
  { "aws AKIAIOSFODNN7EXAMPLE", { { "AKIAIOSFODNN7EXAMPLE", "SECRET" } } },
  { "t=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlX2hlcmU",
    { { "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlX2hlcmU", "SECRET" } } },
  { "x\n-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAK\n-----END RSA PRIVATE KEY-----\ny",
    { { "-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAK\n-----END RSA PRIVATE KEY-----", "SECRET" } } },
  { "password: hunter22", { { "hunter22", "SECRET" } } },
  /* dates: of birth, ISO with time; relative words and versions are not dates */
  { "She was born on 7/5/1981. Her", { { "7/5/1981", "DATE_TIME" } } },
  { "On 2018-01-14 03:07:43, they", { { "2018-01-14 03:07:43", "DATE_TIME" } } },
  { "Call me today, it takes a moment. Build 2.4.1 is out.", { { NULL } } },
  { "Hello. Please send letter 96c before Friday.", { { NULL } } },
  /* names: case variants, repeats, possessives, titles */
  { "pls forward to MARA QUINLEY, or just ping mara quinley",
    { { "MARA QUINLEY", "PERSON" }, { "mara quinley", "PERSON" } } },
  { "verses from Faina D. Yefremova's Cautionary Tales. Early Yefremova",
    { { "Faina D. Yefremova", "PERSON" }, { "Yefremova", "PERSON" } } },
  { "Mr. Kozłowski flew to Paris on Thursday morning.",
    { { "Kozłowski", "PERSON" }, { "Paris", "LOCATION" }, { "Thursday", "DATE_TIME" } } },
  /* addresses: one block; a field label after it is not a city (fixed miss) */
  { "send it to 615 Benedum Drive\nSuite 12\nSpringfield, IL 62704\nMobile: 0490 39 07 81",
    { { "615 Benedum Drive\nSuite 12\nSpringfield, IL 62704", "STREET_ADDRESS" },
      { "0490 39 07 81", "PHONE" } } },
  { "My zip code is 880", { { "880", "STREET_ADDRESS" } } },
  /* clock times with am/pm in every spelling; a date's month keeps the sentence's full stop
   * out unless a year follows */
  { "see you at 5pm, or 5:30 p.m. at the latest", { { "5pm", "DATE_TIME" }, { "5:30 p.m.", "DATE_TIME" } } },
  { "We met before 14 May. His car was red.", { { "14 May", "DATE_TIME" } } },
  { "Due on 3 Jan. 2020 then", { { "3 Jan. 2020", "DATE_TIME" } } },
  /* postcodes written with letters: the UK's and Canada's anywhere, the Netherlands' in an
   * address block or after a cue; a year before "BC" is none */
  { "I live at 42 Fennimore Lane, Leeds LS6 2QT.", { { "42 Fennimore Lane, Leeds LS6 2QT", "STREET_ADDRESS" } } },
  { "Postcode: SW1A 2AA", { { "SW1A 2AA", "STREET_ADDRESS" } } },
  { "Send it to 24 Sussex Drive, Ottawa, ON K1A 0B6.", { { "24 Sussex Drive, Ottawa, ON K1A 0B6", "STREET_ADDRESS" } } },
  { "Kalverstraat 92, 1012 PH Amsterdam.", { { "Kalverstraat 92, 1012 PH Amsterdam", "STREET_ADDRESS" } } },
  { "our postcode is 1012 PH", { { "1012 PH", "STREET_ADDRESS" } } },
  /* US addresses (fixed misses): a post-directional, a state and ZIP code after a city of
   * two words, a ZIP+4 code (no phone number), a city, state and ZIP code without a street */
  { "I live at 1600 Pennsylvania Avenue NW, Washington, DC 20500.",
    { { "1600 Pennsylvania Avenue NW, Washington, DC 20500", "STREET_ADDRESS" } } },
  { "Send it to 350 Fifth Avenue, New York, NY 10118 please",
    { { "350 Fifth Avenue, New York, NY 10118", "STREET_ADDRESS" } } },
  { "She moved to Grand Rapids, MI 49503-1234 last year.",
    { { "Grand Rapids", "LOCATION" }, { "MI", "LOCATION" }, { "49503-1234", "STREET_ADDRESS" } } },
  { "Springfield, IL 62704.5 and Tokyo, JP 12345", { { "Tokyo", "LOCATION" } } },
  { "The A1 road is older than the M25 motorway", { { NULL } } },
  /* address blocks with an extra leading house number are reported as components
   * (fixed miss): number, street, unit, places, postcode */
  { "ship to 48213 Tammikatu 17\n Apt. 880\n Rovala\n\n Finland 44120",
    { { "48213", "STREET_ADDRESS" }, { "Tammikatu 17", "STREET_ADDRESS" }, { "Apt. 880", "STREET_ADDRESS" },
      { "Rovala", "LOCATION" }, { "Finland", "LOCATION" }, { "44120", "STREET_ADDRESS" } } },
  { "Ola lives at 7120 Brekkeveien 31, Tranby",
    { { "Ola", "PERSON" }, { "7120", "STREET_ADDRESS" }, { "Brekkeveien 31", "STREET_ADDRESS" },
      { "Tranby", "LOCATION" } } },
  /* ... but a unit on the street line, or street + city + country, stay one span */
  { "Send it to 3301 Lindgata 12 Suite 404 Halden",
    { { "3301 Lindgata 12 Suite 404 Halden", "STREET_ADDRESS" } } },
  /* a second name + suffix continues the street; Hungarian numbers keep their dot */
  { "to 14 Baker Street Dunmore Squares\n Suite 2\n LEEDS\n United Kingdom 40210?",
    { { "14 Baker Street Dunmore Squares\n Suite 2\n LEEDS\n United Kingdom 40210", "STREET_ADDRESS" } } },
  { "The shop is at Dózsa u. 41.", { { "Dózsa u. 41.", "STREET_ADDRESS" } } },
  /* decades are not house numbers */
  { "see 5 Songs Of The 80s list", { { NULL } } },
  /* multi-word places are matched before common words are trimmed; titles are not places */
  { "She moved to New Zealand with Mr. Okonkwo.",
    { { "New Zealand", "LOCATION" }, { "Okonkwo", "PERSON" } } },
  { "a letter from Mr. to nobody", { { NULL } } },
  /* ranks are cues, not part of the name; nationalities and acronyms are not names */
  { "under Brigadier General Ross G. Hoyt the German ACLU office",
    { { "Ross G. Hoyt", "PERSON" } } },
  /* firms named after partners, places after "in", coordinated surnames, speakers */
  { "Nadia works at Whitfield, Okoro and Brandt in Tromsø.",
    { { "Nadia", "PERSON" }, { "Tromsø", "LOCATION" } } },
  /* ... but a list of people after ":" is not a firm (fixed miss) */
  { "the founders: Szabó, Becker and Vasquez.",
    { { "Szabó", "PERSON" }, { "Becker", "PERSON" }, { "Vasquez", "PERSON" } } },
  { "They had 3: Isabel, Teresa and Jodi.",
    { { "Isabel", "PERSON" }, { "Teresa", "PERSON" }, { "Jodi", "PERSON" } } },
  /* landforms are places and streets are addresses, not people */
  { "We walked from Hancock Brook to Nagle Place.",
    { { "Hancock Brook", "LOCATION" }, { "Nagle Place", "STREET_ADDRESS" } } },
  /* military and "the corner of" addresses (fixed misses) */
  { "ship it to USNS Kovalyk\nFPO AA 12345 please", { { "USNS Kovalyk\nFPO AA 12345", "STREET_ADDRESS" } } },
  { "meet at the corner of Kuusiku 7 and Alexander Flat.", { { "the corner of Kuusiku 7 and Alexander Flat", "STREET_ADDRESS" } } },
  { "Is there a better song? Marrero and Murphy were precision engineers.",
    { { "Marrero", "PERSON" }, { "Murphy", "PERSON" } } },
  { "Ubul: What a day.\nNicole: Indeed.", { { "Ubul", "PERSON" }, { "Nicole", "PERSON" } } },
  { "In July the Longhorns met in Grantham.", { { "Grantham", "LOCATION" } } },
  /* chat text: lower-case given names, no "I'm" in the name */
  { "wow emma is so funny lol", { { "emma", "PERSON" } } },
  { "I'm Naomi Ryan, hi", { { "Naomi Ryan", "PERSON" } } },
  /* middle initials, with or without a dot, are part of the name (fixed miss: "A" and "M"
   * are also words) */
  { "It is under my partner's name Odile K. Varga", { { "Odile K. Varga", "PERSON" } } },
  { "call Kevin M Tarrow today", { { "Kevin M Tarrow", "PERSON" } } },
  /* lower-case full names: given name + surname, with an initial, in text without capitals
   * or in chat text (fixed miss: only the given name was found) */
  { "please follow up with marcel j ostrowski soon", { { "marcel j ostrowski", "PERSON" } } },
  { "tell jana novakova about it", { { "jana novakova", "PERSON" } } },
  { "lol is that Tobias wendrik ? \xf0\x9f\x98\x82", { { "Tobias wendrik", "PERSON" } } },
  /* a word of the city list before a verb of people or a possessive is a surname (fixed
   * miss), a reporting verb is a name cue, a copula + kind of place is not a person */
  { "Tandil accepted the command.", { { "Tandil", "PERSON" } } },
  { "\"That was close,\" says Veldhuis.", { { "Veldhuis", "PERSON" } } },
  { "Okafor is from Orlek Systems", { { "Okafor", "PERSON" } } },
  { "Ravensby is a village in Kent.", { { "Kent", "LOCATION" } } },
  /* a given name that is also a word, before a verb of people; a given name that is only a
   * small town after "to" (fixed misses) */
  { "Lily met Tom in Paris.", { { "Lily", "PERSON" }, { "Tom", "PERSON" }, { "Paris", "LOCATION" } } },
  { "Sorry! said Greta to Logan", { { "Greta", "PERSON" }, { "Logan", "PERSON" } } },
  /* time-zone names of research stations are no places ("Casey"); a surname that is also a
   * word, capitalised inside a sentence, is a name unless a preposition or "the" precedes;
   * a message without final punctuation is chat-like (fixed misses) */
  { "Casey has reached a new level.", { { "Casey", "PERSON" } } },
  { "Then I asked Baker about the plan.", { { "Baker", "PERSON" } } },
  { "We went to Mars.", { { NULL } } },
  { "thanks for the tips Ozzlo", { { "Ozzlo", "PERSON" } } },
  { "We bought Veltronics shares.", { { NULL } } },
  /* chat roles are no names (fixed false positive) */
  { "Bot: What's the name on the account? User: Hedda Lindqvist", { { "Hedda Lindqvist", "PERSON" } } },
  /* places: ALL CAPS after a place cue, country names in text without capitals */
  { "She grew up in VORDALEN.", { { "VORDALEN", "LOCATION" } } },
  { "i'm originally from norway", { { "norway", "LOCATION" } } },
  /* document numbers and postcodes are not phones (fixed false positives) */
  { "my driver's license number is 5130634", { { NULL } } },
  { "ZIP: 75534-030", { { "75534-030", "STREET_ADDRESS" } } },
  { "zip code 394 13 ok", { { "394 13", "STREET_ADDRESS" } } },
  /* whole-word context: "public" must not act as the cue "lic", "essn" not as "ssn" */
  { "public 123456789 and essn 123456789", { { NULL } } },
  /* social-media text (fixed misses and false positives of the tweet evaluation, invented
   * data): stage names with their prefix, also when the rest is an English word */
  { "that new Lil Torvo track is fire", { { "Lil Torvo", "PERSON" } } },
  { "tonight DJ Anchor plays at the club", { { "DJ Anchor", "PERSON" } } },
  /* an @-mention names a person's account: its name (without the '@') is PERSON, whatever it
   * looks like, also in tokenized text ("@ name"); hashtags and camel-case compounds are topic
   * names, not people; '@' as "at" and e-mail addresses are no mentions */
  { "@RoyHenley thanks for the follow #MondayMotivation", { { "RoyHenley", "PERSON" } } },
  { "@P_Rezzphere uh ok", { { "P_Rezzphere", "PERSON" } } },
  { "RT @ MissVarlow : so true", { { "MissVarlow", "PERSON" } } },
  { "@ qmechanic yeah , I waffled over this", { { "qmechanic", "PERSON" } } },
  { "meet @ home @ 5 then", { { NULL } } },
  { "thanks @José_M for the pics", { { "José_M", "PERSON" } } },
  { "loved @Varnek's video 😀", { { "Varnek", "PERSON" } } },
  { "please email ( jovarnek @ gmail . com ) to discuss", { { NULL } } },
  { "see you @5pm on the @2nd floor, @everyone", { { "5pm", "DATE_TIME" } } },
  { "I live @ London now", { { "London", "LOCATION" } } },
  /* a salutation's name that is also a word ("Dear Grace,", "Hi Mark") */
  { "Dear Grace, thanks for the notes", { { "Grace", "PERSON" } } },
  { "Hi Mark, see you at noon", { { "Mark", "PERSON" } } },
  /* a repeat of a name found in the text is that person, not a place guessed from "to X" */
  { "Marisol Quenby joined us. Say hello to Quenby when you see her.",
    { { "Marisol Quenby", "PERSON" }, { "Quenby", "PERSON" } } },
  { "I went to Quenby yesterday.", { { "Quenby", "LOCATION" } } },
  /* the period of a generational suffix belongs to the name; a sentence's does not */
  { "The award went to Martin Okafor Jr. in May", { { "Martin Okafor Jr.", "PERSON" } } },
  /* a quoted nickname is part of the name, and an initial keeps its period (fixed misses) */
  { "Wendell \"Buckshot\" Marrow was a pitcher.", { { "Wendell \"Buckshot\" Marrow", "PERSON" } } },
  { "behind Dave Colclough and Orestis \" Bambos \" Xanthakis .",
    { { "Dave Colclough", "PERSON" }, { "Orestis \" Bambos \" Xanthakis", "PERSON" } } },
  { "Joe \xe2\x80\x9cShoeless\xe2\x80\x9d Jackson played",
    { { "Joe \xe2\x80\x9cShoeless\xe2\x80\x9d Jackson", "PERSON" } } },
  { "It was signed by Colonel Wilbur L.", { { "Wilbur L.", "PERSON" } } },
  /* business words name firms (fixed false PERSON) */
  { "Greenbridge Analytics hired Ilse Brandvik", { { "Ilse Brandvik", "PERSON" } } },
  /* "to" after a word that takes a person is no place cue (fixed false LOCATION) */
  { "She was married to Orvald Brin for years", { { "Orvald Brin", "PERSON" } } },
  { "He wrote a letter to Tamsin Ode last year", { { "Tamsin Ode", "PERSON" } } },
  /* names of other countries (international lists): given name + unknown surname */
  { "He was married to Anastasiya Korolenko after the war.", { { "Anastasiya Korolenko", "PERSON" } } },
  /* "St." opens a place's name, not a sentence (fixed false PERSON "Louis Eagles") */
  { "He played for the St. Louis Eagles in 1933 .", { { "1933", "DATE_TIME" } } },
  { "He moved to St. Petersburg last year.", { { "St. Petersburg", "LOCATION" } } },
  { "I met Martin Okafor.", { { "Martin Okafor", "PERSON" } } },
  { "new vid # StayTuned lol", { { NULL } } },
  { "new vid #StayTuned lol", { { NULL } } },
  /* a verb of people after an unknown capitalised word (verbs that follow names in the
   * tagger's training data, and their other tense) */
  { "In the final round Varsko testified before the committee.", { { "Varsko", "PERSON" } } },
  /* labels of form fields are no names and end the name before them */
  { "Name: Toshiko Varlund Phone: 0490 75 40 81",
    { { "Toshiko Varlund", "PERSON" }, { "0490 75 40 81", "PHONE" } } },
  { "Personal Info: Phone: 201-948-1927 E-mail: kvarl@example.com Website: https://www.example.org/",
    { { "201-948-1927", "PHONE" }, { "kvarl@example.com", "EMAIL" }, { "https://www.example.org/", "URL" } } },
  { "mail tovik@example.com now", { { "tovik@example.com", "EMAIL" } } },
  /* a lower-case given name + a frequent surname that is also a word; after a capitalised
   * given name such a word stays a word; "a"/"i" are no initials before a word */
  { "a huge fan of paul walker tbh", { { "paul walker", "PERSON" } } },
  { "Emma just left the room.", { { "Emma", "PERSON" } } },
  { "ima just rip it up lol", { { NULL } } },
  { "mi a back home now", { { NULL } } },
  { "Bill Short joined the band.", { { "Bill Short", "PERSON" } } },
  /* the subject of a chat sentence: an unknown word before an auxiliary or verb of people,
   * an addressed name, a frequent given name that is also a word before a copula (not one
   * that describes a place) */
  { "Varnokov should have passed the ball lol", { { "Varnokov", "PERSON" } } },
  { "Trelby, do you have the notes?", { { "Trelby", "PERSON" } } },
  { "Bill is so right !", { { "Bill", "PERSON" } } },
  { "Grant is a small town.", { { NULL } } },
  { "kirali is the best lol", { { "kirali", "PERSON" } } },
  /* greetings before lower-case names; "love" takes things too */
  { "hey tanner nice vid", { { "tanner", "PERSON" } } },
  { "hey zorvik nice vid", { { "zorvik", "PERSON" } } },
  { "i love dis song", { { NULL } } },
  /* a name joined by "and" to a found one; a word outside the lists after "my"/"the" is a
   * thing */
  { "wow emma and zeynie are so funny", { { "emma", "PERSON" }, { "zeynie", "PERSON" } } },
  { "i love my Zentrox videos", { { NULL } } },
  /* a place by its context: "<kind of place> of X", "X, <state or country>", an item of a
   * list of places (fixed false PERSON) */
  { "In 1926 the town of Vardley began to restore it.", { { "1926", "DATE_TIME" }, { "Vardley", "LOCATION" } } },
  { "It is in the county seat of Paxton , Illinois .", { { "Paxton", "LOCATION" }, { "Illinois", "LOCATION" } } },
  { "It lies in Hesse, Germany.", { { "Hesse", "LOCATION" }, { "Germany", "LOCATION" } } },
  { "He won in Walsall , Melbourne , Luton and London .",
    { { "Walsall", "LOCATION" }, { "Melbourne", "LOCATION" }, { "Luton", "LOCATION" }, { "London", "LOCATION" } } },
  { "I met Maria Lopez, Texas ranger.", { { "Maria Lopez", "PERSON" }, { "Texas", "LOCATION" } } },
  { "She lived on Collins Ave in Miami Beach.", { { "Collins Ave", "STREET_ADDRESS" }, { "Miami Beach", "LOCATION" } } },
  /* the name of a work or group: after "the band", "their song"; a quoted title; a quoted
   * given name alone stays a name (fixed false PERSON) */
  { "It was about the band Dravsy and their fans.", { { NULL } } },
  { "the demo versions of \"Buddha for Mary\" and \" Fallen \" leaked", { { NULL } } },
  { "They sang \xe2\x80\x9cTube Snake Boogie\xe2\x80\x9d again.", { { NULL } } },
  { "She said \"Anna\" twice.", { { "Anna", "PERSON" } } },
  /* said of firms: founded, an elliptical possessive, a legal form alone; a word before
   * "of" and a name; "A" and "I" as article and pronoun, not initials (fixed false PERSON) */
  { "Carvoli was founded by Italian immigrants.", { { NULL } } },
  { "Thalhimer's became Hecht's in 1992.", { { "1992", "DATE_TIME" } } },
  { "a network operated by CBS , Inc. , for the arts", { { NULL } } },
  { "It fought in the 2nd Battle of Fredericksburg .", { { "Fredericksburg", "LOCATION" } } },
  { "A Storm to Come is the debut album of the band", { { NULL } } },
  { "dislike cause I Haite it", { { NULL } } },
  { "John A Smith met Anna I Kova.", { { "John A Smith", "PERSON" }, { "Anna I Kova", "PERSON" } } },
  /* a possessive given name is no town of that name (fixed false LOCATION) */
  { "We borrowed Mary's car.", { { "Mary", "PERSON" } } },
  /* chat text capitalises words at will: a surname that is also an English word is no name
   * there without a cue (fixed false PERSON); in prose it stays ("said Baker") */
  { "so i watched it all Day lol", { { NULL } } },
  { "damn we finally get a Black hero lol", { { NULL } } },
  /* a firm named after its partners, after "the" or before an organisation word (fixed
   * false PERSON); a list of people stays one */
  { "The Clark, Romero and Hall Orchestra was founded in 1973.", { { "1973", "DATE_TIME" } } },
  { "Our founders: Kovner, Betzel and Varga.", { { "Kovner", "PERSON" }, { "Betzel", "PERSON" }, { "Varga", "PERSON" } } },
  /* a new user's report: a full name before ", <country>", after "the group" with a verb
   * after it, a quoted surname, a surname that is a street or landform word (fixed misses) */
  { "Contact Rajesh Kumar, India office", { { "Rajesh Kumar", "PERSON" }, { "India", "LOCATION" } } },
  { "The group Ilse Marquardt founded in Berlin still plays.", { { "Ilse Marquardt", "PERSON" }, { "Berlin", "LOCATION" } } },
  { "The defendant called himself \"Kessler\" at the trial.", { { "Kessler", "PERSON" } } },
  { "Please call James Park tomorrow about the contract.", { { "James Park", "PERSON" } } },
  { "Dr. Helen Lake reviewed the scans.", { { "Helen Lake", "PERSON" } } },
  /* a salutation's given name that is also a word or a month (fixed misses); a month after
   * "in" stays a date word */
  { "hi Sunny, how are you", { { "Sunny", "PERSON" } } },
  { "Dear May, thanks for the flowers.", { { "May", "PERSON" } } },
  { "See you in May, then.", { { NULL } } },
  /* a card written with dots is a card, not a dotted MAC address and a leaked group (fixed
   * wrong type) */
  { "Card 4111.1111.1111.1111 expires soon", { { "4111.1111.1111.1111", "CREDIT_CARD" } } },
  /* a salutation's name and a listed given name owning something are never vetoed by the
   * tagger; a repeat of a name that is also a word or a month must be capitalised inside a
   * sentence and not after "in" (fixed misses and false PERSON) */
  { "hi Sunny, are we still on for tonight?", { { "Sunny", "PERSON" } } },
  { "We had dinner at Kelsey's house.", { { "Kelsey", "PERSON" } } },
  { "We had dinner at Peter's house.", { { "Peter", "PERSON" } } },
  { "May's sales were up.", { { NULL } } },
  { "Thanks Will, I will call you. Will you come?", { { "Will", "PERSON" } } },
  { "Dear May, you may leave early. See you in May.", { { "May", "PERSON" } } },
  /* a name after a title is never vetoed by the tagger (fixed miss) */
  { "For my take on Miss Ramos, see my blog.", { { "Ramos", "PERSON" } } },
  /* code and version strings are no personal data (issue 20; each was an IP_ADDRESS, PHONE
   * or STREET_ADDRESS): versions and sections after their word, C++ scopes, an agency's form
   * number (also after a ZIP cue), ISBNs with or without their cue, a browser's version */
  { "version 10.7.31.9", { { NULL } } },
  { "kernel 6.1.0.21", { { NULL } } },
  { "section 14.9.1.2", { { NULL } } },
  { "Upgraded to version 10.7.31.9 (kernel 6.1.0.21), see section 14.9.1.2 or \xc2\xa7 14.9.1.3.", { { NULL } } },
  { "Version: 10.7.31.9, ver. 10.7.31.8, version number 10.7.31.7", { { NULL } } },
  { "a::b", { { NULL } } },
  { "dead::beef", { { NULL } } },
  { "Use a::b here, not dead::beef.", { { NULL } } },
  { "OMB No. 1545-0008", { { NULL } } },
  { "Form W-2 Wage and Tax Statement, OMB Control No. 1545-0008", { { NULL } } },
  { "Employer's name, address, and ZIP code OMB No. 1545-0008", { { NULL } } },
  { "Part No. 1545-0008", { { NULL } } },
  { "ISBN 978-0-306-40615-7", { { NULL } } },
  { "ISBN-10 0-306-40615-2", { { NULL } } },
  { "the old edition, 0-8044-2957-X", { { NULL } } },
  { "The book 978-0-306-40615-7 is out", { { NULL } } },
  { "Chrome 120.0.6099.109", { { NULL } } },
  /* a dotted run of 5 or more numbers is neither an address nor a phone number (an OID) */
  { "OID 1.3.6.1.4.1 and 10.7.31.9.5", { { NULL } } },
  /* a part of a decimal or dotted number is no house number */
  { "Python 3.11.4 Main Street", { { NULL } } },
  /* ... while the same numbers in a network's context stay addresses, a short IPv6 form with
   * a digit or after a word of networking stays one, a form number's "No." after a phone
   * label stays a phone cue, and a phone cue keeps a number that could be an ISBN */
  { "IP 10.7.31.9 was blocked, connection from 10.7.31.9 port 22",
    { { "10.7.31.9", "IP_ADDRESS" }, { "10.7.31.9", "IP_ADDRESS" } } },
  { "The version is 10.7.31.9 and the server is 10.7.31.10", { { "10.7.31.10", "IP_ADDRESS" } } },
  { "I upgraded Chrome. 10.0.0.1 is the host", { { "10.0.0.1", "IP_ADDRESS" } } },
  { "IPv6 address dead::beef, host a::b", { { "dead::beef", "IP_ADDRESS" }, { "a::b", "IP_ADDRESS" } } },
  { "listening on [::1]:8080 and fe80::1", { { "::1", "IP_ADDRESS" }, { "fe80::1", "IP_ADDRESS" } } },
  { "HP No. 012-345 6789", { { "012-345 6789", "PHONE" } } },
  { "ID No. 415-5550132", { { "415-5550132", "PHONE" } } },
  { "call 978-030-640-6157", { { "978-030-640-6157", "PHONE" } } },
  { "ISBN 978-0-306-40615-8, call 555-123-4567", { { "555-123-4567", "PHONE" } } },
  { "call me at +1 415 555 0132", { { "+1 415 555 0132", "PHONE" } } },
  { "I live at 1600 Amphitheatre Parkway, Mountain View, CA 94043.",
    { { "1600 Amphitheatre Parkway, Mountain View, CA 94043", "STREET_ADDRESS" } } },
};

/* Cases of the rules alone (no tagger): what a rule itself must find, whatever a tagger's
 * veto later reads */
static const Case rule_cases[] = {
  /* a lower-case word after a possessive is no organisation word (fixed miss) */
  { "I stayed at Mary's house.", { { "Mary", "PERSON" } } },
  /* real addresses of shell commands (the tagger reads "ssh root" and "ping" as names,
   * see code_cases) */
  { "ssh root@192.168.1.20", { { "192.168.1.20", "IP_ADDRESS" } } },
  { "ping6 2001:db8::8a2e:370:7334", { { "2001:db8::8a2e:370:7334", "IP_ADDRESS" } } },
};

/* Code, logs and version strings (issue 20), with the tagger: the spans of the identifier
 * types (below) exactly, other types not looked at ("Linux" opening the uname line and
 * "Gecko" are PERSON to the name rules, "ssh root" to the tagger: names are another
 * matter) */
static const Case code_cases[] = {
  { "for (std::map<a, b>::iterator it = m.begin (); it != m.end (); ++it) { a::b x = dead::beef (); }",
    { { NULL } } },
  { "template <class T> void add::bad (T x) { return cafe::face<T> (x); }\nx = arr[::2] + arr[1::3]",
    { { NULL } } },
  { "Traceback (most recent call last):\n  File \"/usr/lib/python3.11/site-packages/requests/adapters.py\", "
    "line 519, in send\nrequests 2.31.0.1, urllib3 1.26.18.2, Python 3.11.4.1",
    { { NULL } } },
  { "Linux devbox 6.1.0-21-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.90-1 (2024-05-03) x86_64 GNU/Linux",
    { { NULL } } },
  { "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/120.0.6099.109 Safari/537.36",
    { { NULL } } },
  { "User-Agent: Mozilla/5.0 Chrome 120.0.6099.109 Firefox/10.0.0.1", { { NULL } } },
  /* positive controls */
  { "ssh root@192.168.1.20", { { "192.168.1.20", "IP_ADDRESS" } } },
  { "Jan 12 03:14:07 gw sshd[811]: Accepted publickey for ops from 10.7.31.9 port 50522",
    { { "10.7.31.9", "IP_ADDRESS" } } },
  { "ping6 2001:db8::8a2e:370:7334", { { "2001:db8::8a2e:370:7334", "IP_ADDRESS" } } },
  { "call me at +1 415 555 0132", { { "+1 415 555 0132", "PHONE" } } },
  { "I live at 1600 Amphitheatre Parkway, Mountain View, CA 94043.",
    { { "1600 Amphitheatre Parkway, Mountain View, CA 94043", "STREET_ADDRESS" } } },
};

/* The types of identifiers and addresses that code and version strings were taken for. */
static gboolean
identifier_type (HzEntityType t)
{
  return t == HZ_ENTITY_IP_ADDRESS || t == HZ_ENTITY_MAC_ADDRESS || t == HZ_ENTITY_PHONE
         || t == HZ_ENTITY_STREET_ADDRESS || t == HZ_ENTITY_CREDIT_CARD || t == HZ_ENTITY_IBAN
         || t == HZ_ENTITY_US_SSN || t == HZ_ENTITY_NATIONAL_ID;
}

/* Every case's spans, in order, with surface and type; with `only`, the spans of the types
 * it accepts. */
static void
check_cases (HzRedactor *r, const Case *cases, gsize n_cases, gboolean (*only) (HzEntityType))
{
  g_autoptr (GError) err = NULL;
  for (gsize c = 0; c < n_cases; c++)
    {
      const Case *k = &cases[c];
      HzRedaction *res = hz_redactor_analyze (r, k->text, -1, 0, &err);
      g_assert_no_error (err);
      if (only)
        {
          guint kept = 0;
          for (guint i = 0; i < res->n_spans; i++)
            if (only (res->spans[i].type))
              res->spans[kept++] = res->spans[i];
          res->n_spans = kept;
        }
      guint want = 0;
      while (want < 8 && k->expect[want][0])
        want++;
      GString *got = g_string_new (NULL);
      for (guint i = 0; i < res->n_spans; i++)
        g_string_append_printf (got, "[%.*s|%s] ", (int) (res->spans[i].end_byte - res->spans[i].start_byte),
                                res->text + res->spans[i].start_byte, hz_entity_type_name (res->spans[i].type));
      if (res->n_spans != want)
        g_error ("case %zu \"%s\": expected %u spans, got %u: %s", c, k->text, want, res->n_spans, got->str);
      for (guint i = 0; i < want; i++)
        {
          const HzSpan *s = &res->spans[i];
          g_autofree char *surf = g_strndup (res->text + s->start_byte, s->end_byte - s->start_byte);
          if (strcmp (surf, k->expect[i][0]) != 0 || strcmp (hz_entity_type_name (s->type), k->expect[i][1]) != 0)
            g_error ("case %zu \"%s\": span %u is %s, expected [%s|%s]", c, k->text, i, got->str,
                     k->expect[i][0], k->expect[i][1]);
          g_assert_cmpfloat (s->score, >, 0);
          g_assert_cmpfloat (s->score, <=, 1);
          g_assert_nonnull (s->recognizer);
        }
      g_string_free (got, TRUE);
      hz_redaction_free (res);
    }
}

static void
test_cases (void)
{
  g_autoptr (GError) err = NULL;
  HzRedactor *r = hz_redactor_new (&err);
  g_assert_no_error (err);
  check_cases (r, cases, G_N_ELEMENTS (cases), NULL);
  check_cases (r, code_cases, G_N_ELEMENTS (code_cases), identifier_type);
  hz_redactor_clear_person_tagger (r);
  check_cases (r, rule_cases, G_N_ELEMENTS (rule_cases), NULL);
  hz_redactor_free (r);
}

static void
test_offsets_utf8 (void)
{
  HzRedactor *r = hz_redactor_new (NULL);
  const char *text = "😀 Šárka Ottová: šárka@example.cz";
  HzRedaction *res = hz_redactor_analyze (r, text, -1, 0, NULL);
  g_assert_cmpuint (res->n_spans, ==, 2);
  /* code points: emoji = 1 cp / 4 bytes, Š á = 1 cp / 2 bytes */
  g_assert_cmpuint (res->spans[0].start_cp, ==, 2);
  g_assert_cmpuint (res->spans[0].start_byte, ==, 5);
  g_assert_cmpuint (res->spans[0].end_cp, ==, 14);
  g_assert_cmpuint (res->spans[0].end_byte, ==, 5 + strlen ("Šárka Ottová"));
  g_assert_cmpstr (hz_entity_type_name (res->spans[0].type), ==, "PERSON");
  g_assert_cmpstr (hz_entity_type_name (res->spans[1].type), ==, "EMAIL");
  /* the whole address, its non-ASCII local part included */
  g_assert_cmpuint (res->spans[1].start_byte, ==, strlen ("😀 Šárka Ottová: "));
  g_assert_cmpuint (res->spans[1].end_byte, ==, strlen (text));
  hz_redaction_free (res);
  hz_redactor_free (r);
}

static void
test_invalid_utf8 (void)
{
  HzRedactor *r = hz_redactor_new (NULL);
  const char bad[] = "mail \xff\xfe bob@example.com \xc3";
  g_autoptr (GError) err = NULL;
  HzRedaction *res = hz_redactor_analyze (r, bad, sizeof bad - 1, HZ_REDACT_UTF8_REJECT, &err);
  g_assert_null (res);
  g_assert_error (err, G_CONVERT_ERROR, G_CONVERT_ERROR_ILLEGAL_SEQUENCE);
  res = hz_redactor_analyze (r, bad, sizeof bad - 1, HZ_REDACT_UTF8_REPLACE, NULL);
  g_assert_nonnull (res);
  g_assert_true (g_utf8_validate (res->text, res->len, NULL));
  g_assert_cmpuint (res->n_spans, ==, 1);
  g_assert_cmpstr (hz_entity_type_name (res->spans[0].type), ==, "EMAIL");
  g_assert_cmpint (strncmp (res->text + res->spans[0].start_byte, "bob@example.com", 15), ==, 0);
  hz_redaction_free (res);
  /* embedded NUL */
  const char nul[] = "a\0b 4111111111111111";
  res = hz_redactor_analyze (r, nul, sizeof nul - 1, 0, NULL);
  g_assert_cmpuint (res->n_spans, ==, 1);
  g_assert_cmpstr (hz_entity_type_name (res->spans[0].type), ==, "CREDIT_CARD");
  hz_redaction_free (res);
  hz_redactor_free (r);
}

static void
test_enable_disable (void)
{
  HzRedactor *r = hz_redactor_new (NULL);
  hz_redactor_set_enabled (r, HZ_ENTITY_EMAIL, FALSE);
  HzRedaction *res = hz_redactor_analyze (r, "bob@example.com", -1, 0, NULL);
  for (guint i = 0; i < res->n_spans; i++)
    g_assert_cmpint (res->spans[i].type, !=, HZ_ENTITY_EMAIL);
  hz_redaction_free (res);
  hz_redactor_set_min_score (r, 0.99f);
  res = hz_redactor_analyze (r, "call 555-123-4567", -1, 0, NULL);
  g_assert_cmpuint (res->n_spans, ==, 0);
  hz_redaction_free (res);
  hz_redactor_free (r);
  g_assert_cmpint (hz_entity_type_from_name ("EMAIL_ADDRESS"), ==, HZ_ENTITY_EMAIL);
  g_assert_cmpint (hz_entity_type_from_name ("gpe"), ==, HZ_ENTITY_LOCATION);
  g_assert_cmpint (hz_entity_type_from_name ("nope"), ==, HZ_ENTITY_NONE);
}

/* A stand-in for the local model: answers with one real entity, one in another case, one
 * hallucinated, one with an unknown label and one list marker. */
static char *
fake_model (const char *prompt, gpointer user_data, GError **error)
{
  (void) error;
  (*(int *) user_data)++;
  g_assert_nonnull (strstr (prompt, "<text>\nthe zorblax quentaro file from Vremmel"));
  return g_strdup ("PERSON: Zorblax Quentaro\n- LOCATION: \"Vremmel\"\nPERSON: Ilse Nowhere\n"
                   "GALAXY: Andromeda\nnonsense line\n");
}

static char *
failing_model (const char *prompt, gpointer user_data, GError **error)
{
  (void) prompt;
  (void) user_data;
  g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_FAILED, "model not loaded");
  return NULL;
}

static void
test_model_pass (void)
{
  HzRedactor *r = hz_redactor_new (NULL);
  int calls = 0;
  const char *text = "the zorblax quentaro file from Vremmel";
  hz_redactor_set_model (r, fake_model, &calls, NULL);
  /* without HZ_REDACT_MODEL the model is not asked */
  HzRedaction *res = hz_redactor_analyze (r, text, -1, 0, NULL);
  g_assert_cmpint (calls, ==, 0);
  hz_redaction_free (res);
  res = hz_redactor_analyze (r, text, -1, HZ_REDACT_MODEL, NULL);
  g_assert_cmpint (calls, ==, 1);
  /* verified: both real entities (case-insensitive match); the invented ones are dropped */
  g_assert_cmpuint (res->n_spans, ==, 2);
  g_assert_cmpstr (hz_entity_type_name (res->spans[0].type), ==, "PERSON");
  g_assert_cmpuint (res->spans[0].start_byte, ==, 4);
  g_assert_cmpuint (res->spans[0].end_byte, ==, 20);
  g_assert_cmpstr (hz_entity_type_name (res->spans[1].type), ==, "LOCATION");
  g_assert_cmpint (strncmp (text + res->spans[1].start_byte, "Vremmel", 7), ==, 0);
  hz_redaction_free (res);
  /* a failing model leaves the rule-based result (a message says so once per redactor) */
  hz_redactor_set_model (r, failing_model, NULL, NULL);
  for (int i = 0; i < 3; i++)
    {
      res = hz_redactor_analyze (r, "mail bob@example.com", -1, HZ_REDACT_MODEL, NULL);
      g_assert_cmpuint (res->n_spans, ==, 1);
      hz_redaction_free (res);
    }
  g_autofree char *prompt = hz_redactor_model_prompt ("x");
  g_assert_nonnull (strstr (prompt, "JSON array"));
  hz_redactor_free (r);
}

/* A stand-in model that answers in JSON, wrapped in prose: a span at the right offset, one
 * at a wrong offset (located by its text), one whose offset points at other text, a
 * hallucinated one, an unknown label, a non-object element and members of wrong types. */
static char *
json_model (const char *prompt, gpointer user_data, GError **error)
{
  (void) prompt;
  (void) user_data;
  (void) error;
  return g_strdup ("Sure! Here are the spans:\n```json\n["
                   "{\"label\": \"PERSON\", \"text\": \"Ode Brannigan\", \"start\": 5},"
                   "{\"label\": \"LOCATION\", \"text\": \"Qarvath\", \"start\": 2},"
                   "{\"label\": \"PERSON\", \"text\": \"Ode\", \"start\": 0},"
                   "{\"label\": \"PERSON\", \"text\": \"Mira Invented\", \"start\": 40},"
                   "{\"label\": \"PLANET\", \"text\": \"Qarvath\"},"
                   "42, \"PERSON\", {\"label\": 7, \"text\": [1]},"
                   "{\"label\": \"PERSON\", \"text\": \"ode brannigan\", \"start\": \"x\"}"
                   "]\n```\nHope this helps.");
}

static char *
junk_model (const char *prompt, gpointer user_data, GError **error)
{
  (void) prompt;
  (void) error;
  return g_strdup (user_data);
}

static void
test_model_json (void)
{
  HzRedactor *r = hz_redactor_new (NULL);
  /* "Ode" at byte 0 is not "Ode" the model means (offset 0 holds "dear"): the text check
   * decides, and the full name is found at its offset */
  const char *text = "dear Ode Brannigan, welcome to Qarvath";
  hz_redactor_set_model (r, json_model, NULL, NULL);
  HzRedaction *res = hz_redactor_analyze (r, text, -1, HZ_REDACT_MODEL, NULL);
  gboolean person = FALSE, place = FALSE;
  for (guint i = 0; i < res->n_spans; i++)
    {
      const HzSpan *sp = &res->spans[i];
      g_autofree char *surface = g_strndup (text + sp->start_byte, sp->end_byte - sp->start_byte);
      g_assert_null (strstr (surface, "Mira"));
      if (sp->type == HZ_ENTITY_PERSON)
        person = person || (sp->start_byte == 5 && strcmp (surface, "Ode Brannigan") == 0);
      if (sp->type == HZ_ENTITY_LOCATION)
        place = place || strcmp (surface, "Qarvath") == 0;
    }
  g_assert_true (person);
  g_assert_true (place);
  hz_redaction_free (res);
  /* junk of every kind adds nothing and breaks nothing */
  const char *junk[] = { "", "[", "]", "[[[[", "[{\"label\": \"PERSON\", \"text\": \"\"}]",
                         "[{\"label\": \"PERSON\", \"text\": \"Ode\", \"start\": 999999}]",
                         "[{\"label\": \"PERSON\", \"text\": \"Ode\", \"start\": -3}]",
                         "PERSON:\n: Ode\nLOCATION Qarvath\n\xff\xfe", "null", "{\"label\": \"PERSON\"}" };
  for (gsize i = 0; i < G_N_ELEMENTS (junk); i++)
    {
      hz_redactor_set_model (r, junk_model, (gpointer) junk[i], NULL);
      res = hz_redactor_analyze (r, "Hi from nowhere, call 555-123-4567", -1, HZ_REDACT_MODEL, NULL);
      for (guint k = 0; k < res->n_spans; k++)
        g_assert_cmpstr (res->spans[k].recognizer, !=, "model");
      hz_redaction_free (res);
    }
  /* an offset past the end is ignored, the text is then located */
  hz_redactor_set_model (r, junk_model, (gpointer) "[{\"label\": \"PERSON\", \"text\": \"Zyx Wonk\", \"start\": 999}]", NULL);
  res = hz_redactor_analyze (r, "ask zyx wonk", -1, HZ_REDACT_MODEL, NULL);
  g_assert_cmpuint (res->n_spans, ==, 1);
  g_assert_cmpuint (res->spans[0].start_byte, ==, 4);
  g_assert_cmpstr (res->spans[0].recognizer, ==, "model");
  hz_redaction_free (res);
  hz_redactor_free (r);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/redact/recognizers/cases", test_cases);
  g_test_add_func ("/redact/recognizers/offsets-utf8", test_offsets_utf8);
  g_test_add_func ("/redact/recognizers/invalid-utf8", test_invalid_utf8);
  g_test_add_func ("/redact/recognizers/enable-disable", test_enable_disable);
  g_test_add_func ("/redact/recognizers/model-pass", test_model_pass);
  g_test_add_func ("/redact/recognizers/model-json", test_model_json);
  return g_test_run ();
}
