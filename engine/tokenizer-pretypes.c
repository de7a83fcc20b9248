/* engine/tokenizer-pretypes.c — the BPE pre-tokenizers by tokenizer.ggml.pre name.
 *
 * One row per name llama.cpp's llama_vocab::impl::load knows (src/llama-vocab.cpp,
 * ggml-org/llama.cpp 00ad355e), with the list of regexes its llm_tokenizer_bpe applies in
 * turn and the flags it sets (ignore_merges, add_bos, clean_spaces, no BOS, add_sep).
 * The regexes are data, written in the syntax of the Hugging Face tokenizer.json they come
 * from: where llama.cpp rewrote a pattern for std::regex (its "adapted" versions that
 * collapse every non-ASCII letter into one category, e.g. Tekken's and GPT-4o's
 * ((?=[\p{L}])([^a-z]))), the row holds the original pattern llama.cpp quotes, so the
 * split is the model's own (tokenizer-regex.c runs it with full Unicode categories).
 * Where llama.cpp replaces a regex by custom code (Kimi-K2's \p{Han}+, AFMoE's digit
 * groups), the row holds a regex with that code's behaviour.
 *
 * The normalizer: Qwen2's tokenizer.json applies NFC before splitting (HZ_PRE_NFC);
 * llama.cpp does not, which loses exactness on decomposed input.
 *
 * Names whose vocabulary is SentencePiece-style BPE over raw UTF-8 (no byte-level
 * alphabet: gemma4, granite-embed-multi-311m, sarvam-moe, whitespace) are known but
 * refused with that reason.
 */
#include <string.h>
#include "tokenizer-private.h"

#define CONTRACTIONS "(?i:'s|'t|'re|'ve|'m|'ll|'d)"
#define CONTRACTIONS_CS "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
/* [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]* [\p{Ll}\p{Lm}\p{Lo}\p{M}]+ and the reverse (o200k) */
#define UPPER_CLS "[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]"
#define LOWER_CLS "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]"
/* DeepSeek-V3's [!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~] */
#define ASCII_PUNCT_CLS "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~]"
/* 一-龥 ぀-ゟ ゠-ヿ */
#define HAN_KANA_RUN "[\\x{4E00}-\\x{9FA5}\\x{3040}-\\x{309F}\\x{30A0}-\\x{30FF}]+"

const char hz_re_gpt2[] =
  "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
const char hz_re_llama3[] =
  CONTRACTIONS "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
  "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char hz_re_qwen2[] =
  CONTRACTIONS "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
  "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/* GPT-4o / Llama 4 (o200k); also tiny_aya's second regex */
#define RE_GPT4O                                                                          \
  "[^\\r\\n\\p{L}\\p{N}]?" UPPER_CLS "*" LOWER_CLS "+" CONTRACTIONS "?|"                  \
  "[^\\r\\n\\p{L}\\p{N}]?" UPPER_CLS "+" LOWER_CLS "*" CONTRACTIONS "?|"                  \
  "\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
/* Poro, BLOOM, GPT3-Finnish:  ?[^(\s|.,!?…。，、।۔،)]+ */
#define RE_PORO " ?[^(\\s|.,!?\\x{2026}\\x{3002}\\x{FF0C}\\x{3001}\\x{0964}\\x{06D4}\\x{060C})]+"

static const char *const s_default[] = {
  "[\\p{P}\\$\\+<=>\\^~\\|]+", hz_re_gpt2, "\\p{N}+", "[0-9][0-9][0-9]", NULL };
static const char *const s_gpt2[] = { hz_re_gpt2, NULL };
static const char *const s_llama3[] = { hz_re_llama3, NULL };
static const char *const s_qwen2[] = { hz_re_qwen2, NULL };
static const char *const s_starcoder[] = { "\\p{N}", hz_re_gpt2, NULL };
static const char *const s_falcon[] = {
  "[\\p{P}\\$\\+<=>\\^~\\|`]+", hz_re_gpt2, "[0-9][0-9][0-9]", NULL };
static const char *const s_minicpm5[] = {
  "\\p{N}{1,3}",
  CONTRACTIONS "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}+| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
  "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", NULL };
static const char *const s_jais2[] = {
  CONTRACTIONS "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
  "\\s*[\\r\\n]+|\\s{512}(?!\\S)|\\s{256}(?!\\S)|\\s{128}(?!\\S)|\\s{64}(?!\\S)|"
  "\\s{32}(?!\\S)|\\s{16}(?!\\S)|\\s{8}(?!\\S)|\\s{4}(?!\\S)|\\s{1,2}(?!\\S)|\\s{1}", NULL };
static const char *const s_deepseek_llm[] = {
  "[\r\n]",
  "\\s?["
  "A-Za-z\\x{B5}\\x{C0}-\\x{D6}\\x{D8}-\\x{F6}\\x{F8}-\\x{1BA}\\x{1BC}-\\x{1BF}"
  "\\x{1C4}-\\x{293}\\x{295}-\\x{2AF}\\x{370}-\\x{373}\\x{376}\\x{377}"
  "\\x{37B}-\\x{37D}\\x{37F}\\x{386}\\x{388}-\\x{38A}\\x{38C}\\x{38E}-\\x{3A1}"
  "\\x{3A3}-\\x{3F5}\\x{3F7}-\\x{481}\\x{48A}-\\x{52F}\\x{531}-\\x{556}"
  "\\x{10A0}-\\x{10C5}\\x{13A0}-\\x{13F5}\\x{13F8}-\\x{13FD}\\x{1C90}-\\x{1CBA}"
  "\\x{1CBD}-\\x{1CBF}\\x{1D00}-\\x{1D2B}\\x{1D6B}-\\x{1D77}\\x{1D79}-\\x{1D9A}"
  "\\x{1E00}-\\x{1F15}\\x{1F18}-\\x{1F1D}\\x{1F20}-\\x{1F45}\\x{1F48}-\\x{1F4D}"
  "\\x{1F50}-\\x{1F57}\\x{1F59}\\x{1F5B}\\x{1F5D}\\x{1F5F}-\\x{1F7D}"
  "\\x{1F80}-\\x{1FB4}\\x{1FB6}-\\x{1FBC}\\x{1FBE}\\x{1FC2}-\\x{1FC4}"
  "\\x{1FC6}-\\x{1FCC}\\x{1FD0}-\\x{1FD3}\\x{1FD6}-\\x{1FDB}\\x{1FE0}-\\x{1FEC}"
  "\\x{1FF2}-\\x{1FF4}\\x{1FF6}-\\x{1FFC}\\x{2102}\\x{2107}\\x{210A}-\\x{2113}"
  "\\x{2115}\\x{2119}-\\x{211D}\\x{2124}\\x{2126}\\x{2128}\\x{212A}-\\x{212D}"
  "\\x{212F}-\\x{2134}\\x{2139}\\x{213C}-\\x{213F}\\x{2145}-\\x{2149}\\x{214E}"
  "\\x{2183}\\x{2184}\\x{2C00}-\\x{2C7B}\\x{2C7E}-\\x{2CE4}\\x{2CEB}-\\x{2CEE}"
  "\\x{2CF2}\\x{2CF3}\\x{A640}-\\x{A66D}\\x{A680}-\\x{A69B}\\x{A722}-\\x{A76F}"
  "\\x{A771}-\\x{A787}\\x{A78B}-\\x{A78E}\\x{AB70}-\\x{ABBF}\\x{FB00}-\\x{FB06}"
  "\\x{FB13}-\\x{FB17}\\x{FF21}-\\x{FF3A}\\x{FF41}-\\x{FF5A}\\x{10400}-\\x{1044F}"
  "\\x{104B0}-\\x{104D3}\\x{104D8}-\\x{104FB}\\x{10C80}-\\x{10CB2}"
  "\\x{10CC0}-\\x{10CF2}\\x{118A0}-\\x{118DF}\\x{1E900}-\\x{1E943}"
  "]+",
  "\\s?[!-/:-~\\x{FF01}-\\x{FF0F}\\x{FF1A}-\\x{FF5E}\\x{2018}-\\x{201F}\\x{3000}-\\x{3002}]+",
  "\\s+$",
  "[\\x{4E00}-\\x{9FA5}\\x{0800}-\\x{4E00}\\x{AC00}-\\x{D7FF}]+",
  "\\p{N}+", NULL };
static const char *const s_deepseek_coder[] = {
  "[\r\n]", "\\s?\\p{L}+", "\\s?\\p{P}+",
  "[\\x{4E00}-\\x{9FA5}\\x{0800}-\\x{4E00}\\x{AC00}-\\x{D7FF}]+", "\\p{N}", NULL };
static const char *const s_deepseek3[] = {
  "\\p{N}{1,3}", HAN_KANA_RUN,
  ASCII_PUNCT_CLS "[A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|"
  "\\s*[\r\n]+|\\s+(?!\\S)|\\s+", NULL };
static const char *const s_spark2_5[] = {
  "\\p{N}{1,3}", HAN_KANA_RUN,
  ASCII_PUNCT_CLS "[A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+|[\r\n]|"
  "\\s+(?!\\S)|\\s+",
  "\\p{N}", NULL };
static const char *const s_youtu[] = {
  /* [가-힣ㄱ-ㆎ]+|[！…“”‘’—：；，、-〿︰-﹏]+|[ㄅ-ㄯ]+|[一-龥぀-ゟ゠-ヿ]+ */
  "[\\x{AC00}-\\x{D7A3}\\x{3131}-\\x{318E}]+|"
  "[\\x{FF01}\\x{2026}\\x{201C}\\x{201D}\\x{2018}\\x{2019}\\x{2014}\\x{FF1A}\\x{FF1B}\\x{FF0C}"
  "\\x{3001}-\\x{303F}\\x{FE30}-\\x{FE4F}]+|[\\x{3105}-\\x{312F}]+|" HAN_KANA_RUN,
  "[^\\r\\n\\p{L}\\p{N}]?" UPPER_CLS "*" LOWER_CLS "+" CONTRACTIONS_CS "?|"
  "[^\\r\\n\\p{L}\\p{N}]?" UPPER_CLS "+" LOWER_CLS "*" CONTRACTIONS_CS "?|"
  "\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", NULL };
static const char *const s_qwen35[] = {
  CONTRACTIONS "|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|"
  "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", NULL };
static const char *const s_poro[] = { RE_PORO, NULL };
static const char *const s_viking[] = { RE_PORO, "\\p{N}", NULL };
static const char *const s_tekken[] = {
  "[^\\r\\n\\p{L}\\p{N}]?" UPPER_CLS "*" LOWER_CLS "+|"
  "[^\\r\\n\\p{L}\\p{N}]?" UPPER_CLS "+" LOWER_CLS "*|"
  "\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", NULL };
static const char *const s_chameleon[] = {
  "<sentinel:[0-9]+>", "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z", "([\\t\\n]|    |  )",
  "\\p{N}", "[\\p{P}!-/:-@\\[-`{-~]", hz_re_gpt2, NULL };
static const char *const s_gpt4o[] = { RE_GPT4O, NULL };
static const char *const s_tiny_aya[] = { "\\d{1,3}(?=(?:\\d{3})*\\b)", RE_GPT4O, NULL };
static const char *const s_kimi_k2[] = {
  "[\\p{Han}]+|"
  "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}&&[^\\p{Han}]]*"
  "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}&&[^\\p{Han}]]+" CONTRACTIONS "?|"
  "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}&&[^\\p{Han}]]+"
  "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}&&[^\\p{Han}]]*" CONTRACTIONS "?|"
  "\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", NULL };
static const char *const s_superbpe[] = { "\\p{N}+", "(?=(\\d{3})+(?!\\d))", NULL };
static const char *const s_bailingmoe[] = {
  "'(?i:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?+\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]++[\\r\\n]*|"
  "\\s*[\\r\\n]|\\s+(?!\\S)|\\s+", NULL };
static const char *const s_seed_coder[] = {
  CONTRACTIONS "|[^\r\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1}| ?[^\\s\\p{L}\\p{N}\r\n]+|\\s*[\r\n]+|"
  "\\s+(?!\\S)|\\s+", NULL };
static const char *const s_ufakzeka[] = {
  "[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|"
  "\\s+(?!\\S)|\\s+", NULL };
static const char *const s_afmoe[] = {
  /* llama.cpp's custom \p{AFMoE_digits}: a digit run as its leading len % 3 digits, then
   * groups of three */
  "\\p{N}{1,2}(?=(?:\\p{N}{3})*(?!\\p{N}))|\\p{N}{3}",
  /* 一-鿿 㐀-䶿 豈-﫿 ぀-ゟ ゠-ヿ ･-ﾟ ⼀-⿟ เ-๿ ຀-໿ ក-៿ က-႟ ꩠ-ꩿ ꧠ-꧿ 가-힯 ᄀ-ᇿ */
  "[\\x{4E00}-\\x{9FFF}\\x{3400}-\\x{4DBF}\\x{F900}-\\x{FAFF}\\x{3040}-\\x{309F}"
  "\\x{30A0}-\\x{30FF}\\x{FF65}-\\x{FF9F}\\x{2F00}-\\x{2FDF}\\x{0E00}-\\x{0E7F}"
  "\\x{0E80}-\\x{0EFF}\\x{1780}-\\x{17FF}\\x{1000}-\\x{109F}\\x{AA60}-\\x{AA7F}"
  "\\x{A9E0}-\\x{A9FF}\\x{AC00}-\\x{D7AF}\\x{1100}-\\x{11FF}]+",
  ASCII_PUNCT_CLS "[A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\\r\\n]*|"
  "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", NULL };
static const char *const s_laguna[] = {
  "[^\\n]+|[\\n]+",
  CONTRACTIONS_CS "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
  "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", NULL };
static const char *const s_exaone_moe[] = {
  CONTRACTIONS "|[^\\r\\n\\p{L}\\p{N}]?(?:\\p{L}\\p{M}*(?: \\p{L}\\p{M}*)*)+|\\p{N}|"
  " ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]?|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+", NULL };

#define IM   HZ_PRE_IGNORE_MERGES
#define BOS  HZ_PRE_ADD_BOS
#define KEEP HZ_PRE_KEEP_SPACES
#define NOB  HZ_PRE_NO_BOS
#define SEP  HZ_PRE_ADD_SEP
#define NFC  HZ_PRE_NFC
#define RAW_UTF8 "SentencePiece-style BPE over raw UTF-8 (no byte-level alphabet)"

/* In llama.cpp's order. Where several names share a split, the one the Hugging Face
 * importer should write for a tokenizer.json comes first among those with equal flags. */
static const HzPreInfo pre_table[] = {
  { "default",          s_default, 0, NULL },
  { "minicpm5",         s_minicpm5, IM, NULL },
  { "llama-bpe",        s_llama3, IM | BOS, NULL },
  { "llama3",           s_llama3, IM | BOS, NULL },
  { "llama-v3",         s_llama3, IM | BOS, NULL },
  { "falcon3",          s_llama3, IM | BOS, NULL },
  { "falcon-h1",        s_llama3, IM | BOS, NULL },
  { "pixtral",          s_llama3, IM | BOS, NULL },
  { "midm-2.0",         s_llama3, IM | BOS, NULL },
  { "lfm2",             s_llama3, IM | BOS, NULL },
  { "jina-v5-nano",     s_llama3, IM | BOS, NULL },
  { "deepseek-llm",     s_deepseek_llm, KEEP, NULL },
  { "deepseek-coder",   s_deepseek_coder, KEEP, NULL },
  { "deepseek-v3",      s_deepseek3, KEEP, NULL },
  { "spark2_5",         s_spark2_5, KEEP, NULL },
  { "youtu",            s_youtu, KEEP | IM, NULL },
  { "falcon",           s_falcon, 0, NULL },
  { "gpt-2",            s_gpt2, 0, NULL },
  { "mpt",              s_gpt2, 0, NULL },
  { "starcoder",        s_starcoder, 0, NULL },
  { "phi-2",            s_gpt2, 0, NULL },
  { "jina-es",          s_gpt2, 0, NULL },
  { "jina-de",          s_gpt2, 0, NULL },
  { "gigachat",         s_gpt2, 0, NULL },
  { "jina-v2-es",       s_gpt2, 0, NULL },
  { "jina-v2-de",       s_gpt2, 0, NULL },
  { "a.x-4.0",          s_gpt2, 0, NULL },
  { "mellum",           s_gpt2, 0, NULL },
  { "modern-bert",      s_gpt2, 0, NULL },
  { "jais-2",           s_jais2, 0, NULL },
  { "gemma4",           NULL, 0, RAW_UTF8 },
  { "granite-embed-multi-311m", NULL, 0, RAW_UTF8 },
  { "sarvam-moe",       NULL, 0, RAW_UTF8 },
  { "jina-v1-en",       s_gpt2, SEP, NULL },
  { "jina-v2-code",     s_gpt2, SEP, NULL },
  { "roberta-bpe",      s_gpt2, SEP, NULL },
  { "whitespace",       NULL, 0, "a whitespace split over raw UTF-8 (no byte-level alphabet)" },
  { "refact",           s_starcoder, 0, NULL },
  { "smollm",           s_starcoder, KEEP, NULL },
  { "command-r",        s_starcoder, KEEP, NULL },
  { "qwen2",            s_qwen2, KEEP | NFC, NULL },
  { "deepseek-r1-qwen", s_qwen2, KEEP | NFC, NULL },
  { "kormo",            s_qwen2, KEEP, NULL },
  { "f2llmv2",          s_qwen2, KEEP, NULL },
  { "qwen35",           s_qwen35, KEEP, NULL },
  { "stablelm2",        s_qwen2, 0, NULL },
  { "olmo",             s_gpt2, 0, NULL },
  { "dbrx",             s_llama3, 0, NULL },
  { "smaug-bpe",        s_llama3, 0, NULL },
  { "poro-chat",        s_poro, KEEP, NULL },
  { "glm4",             s_llama3, NOB, NULL },
  { "chatglm-bpe",      s_llama3, NOB, NULL },
  { "viking",           s_viking, KEEP, NULL },
  { "jais",             s_gpt2, 0, NULL },
  { "tekken",           s_tekken, KEEP | IM | BOS, NULL },
  { "codeshell",        s_starcoder, 0, NULL },
  { "bloom",            s_poro, 0, NULL },
  { "gpt3-finnish",     s_poro, 0, NULL },
  { "exaone",           s_starcoder, 0, NULL },
  { "exaone4",          s_gpt2, 0, NULL },
  { "exaone-moe",       s_exaone_moe, 0, NULL },
  { "chameleon",        s_chameleon, BOS | KEEP, NULL },
  { "minerva-7b",       s_starcoder, 0, NULL },
  { "megrez",           s_qwen2, 0, NULL },
  { "gpt-4o",           s_gpt4o, KEEP, NULL },
  { "llama4",           s_gpt4o, KEEP, NULL },
  { "kanana2",          s_gpt4o, KEEP, NULL },
  { "talkie",           s_gpt4o, KEEP, NULL },
  { "granite-embed-multi-97m", s_gpt4o, KEEP | IM, NULL },
  { "tiny_aya",         s_tiny_aya, KEEP, NULL },
  { "cohere2moe",       s_tiny_aya, KEEP, NULL },
  { "superbpe",         s_superbpe, KEEP, NULL },
  { "trillion",         s_gpt2, KEEP, NULL },
  { "granite-docling",  s_gpt2, KEEP, NULL },
  { "bailingmoe",       s_bailingmoe, KEEP, NULL },
  { "bailingmoe2",      s_bailingmoe, KEEP, NULL },
  { "llada-moe",        s_bailingmoe, KEEP, NULL },
  { "seed-coder",       s_seed_coder, KEEP, NULL },
  { "hunyuan",          s_qwen2, KEEP, NULL },
  { "hunyuan-dense",    s_deepseek3, KEEP, NULL },
  { "hy_v4",            s_deepseek3, KEEP, NULL },
  { "joyai-llm",        s_deepseek3, KEEP, NULL },
  { "kimi-k2",          s_kimi_k2, KEEP, NULL },
  { "ufakzeka",         s_ufakzeka, KEEP, NULL },
  { "grok-2",           s_qwen2, KEEP, NULL },
  { "afmoe",            s_afmoe, KEEP, NULL },
  { "laguna",           s_laguna, KEEP, NULL },
  { "minimax-m2",       s_gpt4o, KEEP, NULL },
  { "solar-open",       s_qwen2, KEEP, NULL },
  { "mellum2",          s_starcoder, 0, NULL },
};

/* Documented in tokenizer-private.h. */
const HzPreInfo *
hz_pre_info (const char *name)
{
  for (gsize i = 0; i < G_N_ELEMENTS (pre_table); i++)
    if (strcmp (pre_table[i].name, name) == 0)
      return &pre_table[i];
  return NULL;
}

/* Documented in tokenizer-private.h. */
const HzPreInfo *
hz_pre_infos (gsize *n)
{
  *n = G_N_ELEMENTS (pre_table);
  return pre_table;
}
