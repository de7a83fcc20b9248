/* hanzo-store.h — public API of libhzstore, Hanzo Desktop's on-device database.
 *
 * One SQLite file (default $XDG_DATA_HOME/hanzo/hanzo.db) in WAL mode with foreign keys
 * on. The schema is versioned by PRAGMA user_version and migrated forward on open
 * (store/schema.c; see store/README.md for the tables and the migration rules).
 *
 * Threads and processes
 *   An HzStore owns one SQLite connection and caches prepared statements: use each
 *   HzStore from one thread at a time (it is not internally locked; moving it between
 *   threads is fine). Any number of HzStore instances may be open on the same file from
 *   different threads or processes (the app, hanzo-learner): WAL lets readers run while one
 *   writer writes, and writers wait up to HZ_STORE_BUSY_TIMEOUT_MS for each other before
 *   failing with HZ_STORE_ERROR_BUSY. An open HzStore keeps SQLite's locks on the file for
 *   as long as it is open, whatever else this or another process opens or closes (other
 *   processes never checkpoint away or delete its -wal and -shm); code outside the store
 *   must not open the database files itself while a store may be open (store-private.h,
 *   "One descriptor per database file"; stat() and the like are fine).
 *
 * Units
 *   Times are Unix times in microseconds (gint64, g_get_real_time()) and are named *_us;
 *   durations from the engine are seconds (double) and are named *_s. Ids are SQLite row
 *   ids (gint64, > 0); 0 means "none" (e.g. no parent message) or "error" as a return.
 *
 * Text
 *   All strings passed in must be valid UTF-8 (NUL-terminated). Invalid UTF-8 is rejected
 *   with HZ_STORE_ERROR_INVALID and nothing is written; the caller (the engine's detokeniser
 *   holds back partial characters) is expected to pass whole characters. Strings read back
 *   are therefore always valid UTF-8.
 *
 * Durability
 *   synchronous=NORMAL in WAL mode: a call that returned TRUE survives a crash or kill of
 *   the process; after a power loss the last commits (at most since the last checkpoint)
 *   may be rolled back, but the file is never corrupted. See store/README.md.
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/** Schema version this library writes and understands (PRAGMA user_version). A file with
 *  a larger user_version is refused with HZ_STORE_ERROR_TOO_NEW. */
#define HZ_STORE_SCHEMA_VERSION 9

/** How long one connection waits for another's write lock before HZ_STORE_ERROR_BUSY (ms). */
#define HZ_STORE_BUSY_TIMEOUT_MS 5000

#define HZ_STORE_ERROR (hz_store_error_quark ())
/** Error domain of every function in this header. Thread-safe. */
GQuark hz_store_error_quark (void);

typedef enum {
  HZ_STORE_ERROR_FAILED,     /* any other SQLite error (message has SQLite's text) */
  HZ_STORE_ERROR_IO,         /* directory cannot be created, file cannot be opened/read */
  HZ_STORE_ERROR_CORRUPT,    /* not a Hanzo database: not SQLite, malformed, or another
                                application's SQLite file; the file is left untouched */
  HZ_STORE_ERROR_TOO_NEW,    /* written by a newer Hanzo (user_version > ours); untouched */
  HZ_STORE_ERROR_NOT_FOUND,  /* no conversation/message with that id */
  HZ_STORE_ERROR_INVALID,    /* bad argument: invalid UTF-8, unknown role, foreign parent */
  HZ_STORE_ERROR_FULL,       /* disk (or size limit) full; the write was rolled back */
  HZ_STORE_ERROR_BUSY,       /* another connection held the lock past the busy timeout */
  HZ_STORE_ERROR_READONLY,   /* file or directory not writable */
} HzStoreError;

/* ----------------------------------------------------------------- roles */

typedef enum {
  HZ_ROLE_SYSTEM,
  HZ_ROLE_USER,
  HZ_ROLE_ASSISTANT,
} HzRole;

/** "system", "user" or "assistant" (the strings stored in messages.role); NULL for an
 *  out-of-range value. Thread-safe. */
const char *hz_role_to_string (HzRole role);

/** Parse a role string as written by hz_role_to_string(). Returns FALSE (and leaves
 *  *out_role alone) for anything else. Thread-safe. */
gboolean hz_role_from_string (const char *str, HzRole *out_role);

/* ----------------------------------------------------------------- records */

/** One conversation (row of `conversations`). Owned by the caller; free with
 *  hz_conversation_free(). */
typedef struct {
  gint64   id;
  char    *title;          /* never NULL ("" when untitled) */
  char    *system_prompt;  /* NULL = none (use the model's default) */
  char    *model_path;     /* NULL = none chosen; the model file last used */
  gint64   created_us;     /* Unix microseconds */
  gint64   updated_us;     /* Unix microseconds; bumped by rename/settings/append */
  gboolean pinned;
} HzConversation;

void hz_conversation_free (HzConversation *conv);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzConversation, hz_conversation_free)

/** One message (row of `messages`). Owned by the caller; free with hz_message_free(). */
typedef struct {
  gint64   id;
  gint64   conversation_id;
  gint64   parent_id;      /* 0 = none; else a message of the same conversation this one
                              answers/replaces (edits, regenerations) */
  HzRole   role;
  char    *content;        /* never NULL; UTF-8; a reply's answer */
  char    *reasoning;      /* never NULL; a thinking model's reasoning before the answer
                              ("" when none; table message_reasoning, schema 9) */
  char    *model_sha256;   /* NULL = unknown / not model-generated; lowercase hex */
  gint64   created_us;     /* Unix microseconds */
  gint64   updated_us;     /* Unix microseconds; bumped by every update */
  gint64   n_tokens;       /* generated tokens; 0 when unknown */
  double   ttft_s;         /* time to first token, seconds; < 0 = unknown */
  double   tokens_per_s;   /* decode speed; < 0 = unknown */
  gboolean complete;       /* FALSE while streaming (or if the app died mid-reply) */
} HzMessage;

void hz_message_free (HzMessage *msg);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzMessage, hz_message_free)

/** One full-text search result. Free with hz_search_hit_free(). */
typedef struct {
  gint64  message_id;
  gint64  conversation_id;
  char   *snippet;   /* excerpt of the content, matches wrapped in U+0002 ... U+0003 */
  double  rank;      /* FTS5 bm25 rank; smaller (more negative) = better */
} HzSearchHit;

void hz_search_hit_free (HzSearchHit *hit);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzSearchHit, hz_search_hit_free)

/* ----------------------------------------------------------------- the store */

typedef struct _HzStore HzStore;

/** The default database path, $XDG_DATA_HOME/hanzo/hanzo.db (g_get_user_data_dir()).
 *  Free with g_free(). Thread-safe. */
char *hz_store_default_path (void);

/** Open (creating if needed) the store at `path` (NULL = hz_store_default_path(); missing
 *  parent directories are created, mode 0700), set WAL, foreign keys, synchronous=NORMAL
 *  and the busy timeout, and migrate the schema to HZ_STORE_SCHEMA_VERSION (each migration
 *  step in its own transaction; safe when several processes open a fresh file at once).
 *  An empty (0-byte) file is initialised like a new one. A new file is created with mode
 *  0600 (so are its -wal and -shm files, which SQLite makes with the database's mode);
 *  those of an existing Hanzo database are set to 0600 when they have group/other bits
 *  (files of another owner, or that cannot be changed, are left as they are).
 *  Errors: HZ_STORE_ERROR_CORRUPT when the file is not an SQLite database (it is left
 *  byte-for-byte untouched), HZ_STORE_ERROR_TOO_NEW for a newer schema (untouched),
 *  HZ_STORE_ERROR_IO / _READONLY / _BUSY / _FULL / _FAILED otherwise.
 *  Returns NULL on error. Thread-safe (returns a new, independent connection). */
HzStore *hz_store_open (const char *path, GError **error);

/** Open the existing store at `path` (NULL = hz_store_default_path()) for reading only
 *  (SQLITE_OPEN_READONLY and PRAGMA query_only): nothing is created, migrated, chmod'ed or
 *  written; every write accessor fails with HZ_STORE_ERROR_READONLY. For readers outside
 *  the app, e.g. `hanzo mcp`'s search_conversations. The app's WAL is read through its
 *  -shm index as SQLite does for any reader (SQLite may create an empty -wal/-shm pair
 *  next to a file that has none, with the database's mode). Errors:
 *  HZ_STORE_ERROR_NOT_FOUND (no file at `path`), _CORRUPT (not a Hanzo database),
 *  _TOO_NEW, _READONLY (an older or empty file: it is migrated only when a writer opens
 *  it), _IO / _BUSY / _FAILED. Thread-safe (returns a new, independent connection). */
HzStore *hz_store_open_readonly (const char *path, GError **error);

/** Finalise cached statements and close the connection. NULL is ignored. Any transaction
 *  opened with hz_store_begin() and not committed is rolled back. */
void hz_store_close (HzStore *store);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzStore, hz_store_close)

/** The file this store was opened on (owned by the store). */
const char *hz_store_get_path (HzStore *store);

/** The schema version of the open file (== HZ_STORE_SCHEMA_VERSION after a successful
 *  open). */
int hz_store_get_schema_version (HzStore *store);

/* ----------------------------------------------------------------- transactions */

/** Start an explicit write transaction (BEGIN IMMEDIATE: takes the write lock now,
 *  waiting up to the busy timeout). Every accessor below also works inside it; use it to
 *  batch many writes (one fsync). Not nestable: a second begin fails with
 *  HZ_STORE_ERROR_INVALID. Errors: HZ_STORE_ERROR_BUSY, _FAILED. */
gboolean hz_store_begin (HzStore *store, GError **error);

/** Commit the transaction started by hz_store_begin(). On error (e.g.
 *  HZ_STORE_ERROR_FULL, _BUSY) the transaction is rolled back and nothing is written. */
gboolean hz_store_commit (HzStore *store, GError **error);

/** Roll back the transaction started by hz_store_begin(). A no-op when none is open. */
void hz_store_rollback (HzStore *store);

/* ----------------------------------------------------------------- conversations */

/** Create a conversation. `title` may be NULL (stored as ""); `system_prompt` and
 *  `model_path` may be NULL. created_us = updated_us = now. Returns the new id (> 0), or
 *  0 on error (HZ_STORE_ERROR_INVALID for invalid UTF-8, _FULL, _BUSY, _FAILED). */
gint64 hz_store_create_conversation (HzStore    *store,
                                     const char *title,
                                     const char *system_prompt,
                                     const char *model_path,
                                     GError    **error);

/** Fetch one conversation. NULL with HZ_STORE_ERROR_NOT_FOUND if there is none. */
HzConversation *hz_store_get_conversation (HzStore *store, gint64 id, GError **error);

/** All conversations, pinned first, then most recently updated first (ties: newest id
 *  first). Element type HzConversation*; the array frees its elements. NULL on error. */
GPtrArray *hz_store_list_conversations (HzStore *store, GError **error);

/** Set the title (NULL = ""); bumps updated_us. HZ_STORE_ERROR_NOT_FOUND if absent. */
gboolean hz_store_rename_conversation (HzStore    *store,
                                       gint64      id,
                                       const char *title,
                                       GError    **error);

/** Pin or unpin (pinned conversations list first). Does not bump updated_us. */
gboolean hz_store_set_conversation_pinned (HzStore *store,
                                           gint64   id,
                                           gboolean pinned,
                                           GError **error);

/** Set the per-conversation system prompt (NULL = none); bumps updated_us. */
gboolean hz_store_set_conversation_system_prompt (HzStore    *store,
                                                  gint64      id,
                                                  const char *system_prompt,
                                                  GError    **error);

/** Set the model file used by the conversation (NULL = none); bumps updated_us. */
gboolean hz_store_set_conversation_model (HzStore    *store,
                                          gint64      id,
                                          const char *model_path,
                                          GError    **error);

/** Delete a conversation and (ON DELETE CASCADE) all its messages and their search
 *  index entries. HZ_STORE_ERROR_NOT_FOUND if absent. */
gboolean hz_store_delete_conversation (HzStore *store, gint64 id, GError **error);

/* ----------------------------------------------------------------- messages */

/** Append a message to a conversation and bump the conversation's updated_us.
 *  `parent_id` is 0 or the id of a message in the same conversation (else
 *  HZ_STORE_ERROR_INVALID). `content` may be "" (start of a streamed reply) but not NULL;
 *  `model_sha256` may be NULL. Pass complete = FALSE for a reply that will stream in
 *  (then hz_store_update_message() and hz_store_set_message_complete()), TRUE otherwise.
 *  Stats start unknown (n_tokens 0, ttft_s/tokens_per_s < 0).
 *  Returns the new id (> 0) or 0 on error: HZ_STORE_ERROR_NOT_FOUND (no such
 *  conversation), _INVALID (bad UTF-8/role/parent), _FULL, _BUSY, _FAILED. */
gint64 hz_store_append_message (HzStore    *store,
                                gint64      conversation_id,
                                gint64      parent_id,
                                HzRole      role,
                                const char *content,
                                const char *model_sha256,
                                gboolean    complete,
                                GError    **error);

/** Replace a message's content and/or stats and bump its updated_us; meant to be called
 *  about once a second while a reply streams (uses a cached prepared statement, one short
 *  write transaction). Each argument keeps the stored value when "unset": content NULL,
 *  n_tokens < 0, ttft_s < 0 or NaN, tokens_per_s < 0 or NaN.
 *  Errors: HZ_STORE_ERROR_NOT_FOUND, _INVALID (bad UTF-8), _FULL, _BUSY, _FAILED. */
gboolean hz_store_update_message (HzStore    *store,
                                  gint64      id,
                                  const char *content,
                                  gint64      n_tokens,
                                  double      ttft_s,
                                  double      tokens_per_s,
                                  GError    **error);

/** As hz_store_update_message(), also setting the reply's reasoning part (kept apart from
 *  its content, which is the answer: HzMessage.reasoning) in the same transaction:
 *  `reasoning` NULL keeps it, "" removes it. Errors: those of hz_store_update_message()
 *  (_INVALID also for bad UTF-8 in `reasoning`). */
gboolean hz_store_update_reply (HzStore    *store,
                                gint64      id,
                                const char *content,
                                const char *reasoning,
                                gint64      n_tokens,
                                double      ttft_s,
                                double      tokens_per_s,
                                GError    **error);

/** Mark a streamed message complete (complete = 1, updated_us = now).
 *  HZ_STORE_ERROR_NOT_FOUND if absent. */
gboolean hz_store_set_message_complete (HzStore *store, gint64 id, GError **error);

/** Fetch one message. NULL with HZ_STORE_ERROR_NOT_FOUND if there is none. */
HzMessage *hz_store_get_message (HzStore *store, gint64 id, GError **error);

/** The messages of a conversation in append order (by id; not by created_us, so a clock
 *  change cannot reorder them). Element type
 *  HzMessage*; the array frees its elements. An unknown conversation gives an empty
 *  array (check with hz_store_get_conversation() if it matters). NULL on error. */
GPtrArray *hz_store_list_messages (HzStore *store, gint64 conversation_id, GError **error);

/** Delete one message. Messages whose parent_id pointed at it get parent_id 0 (ON DELETE
 *  SET NULL). HZ_STORE_ERROR_NOT_FOUND if absent. */
gboolean hz_store_delete_message (HzStore *store, gint64 id, GError **error);

/* ----------------------------------------------------------------- search */

/** Full-text search over all message contents (SQLite FTS5, unicode61 tokenizer with
 *  diacritics removed, case-insensitive). `query` is plain user text, not FTS syntax: it
 *  is split on whitespace, every word must occur, the last word matches as a prefix
 *  ("hel wor" finds "hello world"). Returns at most `limit` hits (limit <= 0: 50), best
 *  first; element type HzSearchHit*, the array frees its elements. An empty/blank query
 *  gives an empty array. Errors: HZ_STORE_ERROR_INVALID (bad UTF-8), _FAILED. */
GPtrArray *hz_store_search_messages (HzStore    *store,
                                     const char *query,
                                     int         limit,
                                     GError    **error);

G_END_DECLS
