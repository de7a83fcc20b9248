/* test-flatpak-bus-names.c — every D-Bus name the project owns, activates or talks to is
 * allowed inside the Flatpak sandbox that flatpak/ai.hanzo.Desktop.json describes.
 *
 * The names come from the sources, not from a list: the C files of the modules that the
 * Flatpak installs (app/, learner/, egress/, engine/, store/, redactor/, tools/) are scanned,
 * comments removed, for the GIO calls that name a bus name (g_dbus_connection_call*,
 * g_dbus_connection_signal_subscribe, g_bus_watch_name*, g_bus_own_name*, g_dbus_proxy_new*,
 * g_application_new and the "application-id" property), and each name argument is resolved
 * as a string literal or a #define of one (the build's app/hz-config.h included). An argument
 * that names a unique name (an expression with "owner", "sender" or "unique_name": the owner
 * of a name already checked) is skipped; any other expression fails the test, so that a new
 * call cannot escape the check. A call is on the system bus when its bus type is
 * G_BUS_TYPE_SYSTEM or its connection variable was assigned g_bus_get_sync
 * (G_BUS_TYPE_SYSTEM, ...) in the same function.
 *
 * Flatpak's rules (flatpak common/flatpak-context.c, flatpak_context_add_bus_filters and
 * flatpak_context_get_allowed_exports; common/flatpak-run-dbus.c): on the session bus an app
 * may own (and talk to) its id and every name under it ("ID.*"), plus --own-name=; it may
 * talk to --talk-name= names, the portals (org.freedesktop.portal.*) and the bus itself; on
 * the system bus only to --system-talk-name= / --system-own-name= names. A "N.*" pattern
 * matches N and N.anything. A D-Bus service file is exported only when its file name is
 * NAME.service for an exactly matching allowed own name, with Name=NAME inside.
 * So: each owned name must be allowed to be owned, each name talked to allowed to be talked
 * to, each name activated (watched with G_BUS_NAME_WATCHER_FLAGS_AUTO_START) must have an
 * installed data/NAME.service.in that Flatpak exports, and each such service file must be
 * owned by a GApplication of the project. The names found are printed as TAP comments.
 */
#include <json-glib/json-glib.h>
#include <string.h>

typedef enum { USE_OWN, USE_TALK, USE_ACTIVATE } UseKind;

typedef struct {
  char    *name;
  char    *where;   /* file:line */
  UseKind  kind;
  gboolean system;
} BusUse;

typedef struct {
  const char *func;
  int         name_arg;   /* index of the bus name argument */
  UseKind     kind;
} CallSpec;

/* The GIO calls that take a well-known name, and which argument it is. */
static const CallSpec calls[] = {
  { "g_dbus_connection_call", 1, USE_TALK },
  { "g_dbus_connection_call_sync", 1, USE_TALK },
  { "g_dbus_connection_call_with_unix_fd_list", 1, USE_TALK },
  { "g_dbus_connection_call_with_unix_fd_list_sync", 1, USE_TALK },
  { "g_dbus_connection_signal_subscribe", 1, USE_TALK },
  { "g_bus_watch_name", 1, USE_TALK },
  { "g_bus_watch_name_on_connection", 1, USE_TALK },
  { "g_bus_own_name", 1, USE_OWN },
  { "g_bus_own_name_on_connection", 1, USE_OWN },
  { "g_dbus_proxy_new", 3, USE_TALK },
  { "g_dbus_proxy_new_sync", 3, USE_TALK },
  { "g_dbus_proxy_new_for_bus", 3, USE_TALK },
  { "g_dbus_proxy_new_for_bus_sync", 3, USE_TALK },
  { "g_application_new", 0, USE_OWN },
  { "gtk_application_new", 0, USE_OWN },
  { "adw_application_new", 0, USE_OWN },
};

static const char *const scanned_dirs[] = { "app", "learner", "egress", "engine", "store",
                                            "redactor", "tools" };

static const char *src_dir;
static const char *build_dir;
static char *app_id;
static GPtrArray *own_names, *talk_names, *system_names;   /* from finish-args */
static GPtrArray *uses;                                     /* BusUse * */
static GHashTable *defines;                                 /* IDENT -> literal */
static GPtrArray *unresolved;                               /* char *: what and where */

static void
bus_use_free (BusUse *u)
{
  g_free (u->name);
  g_free (u->where);
  g_free (u);
}

/* Flatpak's wildcard match: "a.b.*" matches "a.b" and "a.b.anything"; else exact. */
static gboolean
name_matches (const char *name, const char *pattern)
{
  if (g_str_has_suffix (pattern, ".*"))
    {
      gsize n = strlen (pattern) - 2;
      return strncmp (name, pattern, n) == 0 && (name[n] == '\0' || name[n] == '.');
    }
  return strcmp (name, pattern) == 0;
}

static gboolean
matches_any (const char *name, GPtrArray *patterns)
{
  for (guint i = 0; i < patterns->len; i++)
    if (name_matches (name, patterns->pdata[i]))
      return TRUE;
  return FALSE;
}

static gboolean
may_own (const char *name)
{
  return matches_any (name, own_names);
}

static gboolean
may_talk (const char *name, gboolean system)
{
  if (strcmp (name, "org.freedesktop.DBus") == 0)
    return TRUE;
  if (system)
    return matches_any (name, system_names);
  return may_own (name) || matches_any (name, talk_names)
         || name_matches (name, "org.freedesktop.portal.*");
}

/* The closing quote of the C string or character literal that starts at `p` (or the end
 * of the text when it is not closed). */
static const char *
literal_end (const char *p)
{
  const char q = *p;
  for (p++; *p && *p != q; p++)
    if (*p == '\\' && p[1])
      p++;
  return p;
}

/* The text with comments blanked (strings and line structure kept). */
static char *
strip_comments (const char *text)
{
  char *out = g_strdup (text);
  for (char *p = out; *p; p++)
    {
      if (*p == '"' || *p == '\'')
        {
          if (!*(p = (char *) literal_end (p)))
            break;
        }
      else if (p[0] == '/' && p[1] == '*')
        {
          for (; *p && !(p[0] == '*' && p[1] == '/'); p++)
            if (*p != '\n')
              *p = ' ';
          if (*p)
            p[0] = p[1] = ' ', p++;
          else
            break;
        }
      else if (p[0] == '/' && p[1] == '/')
        for (; *p && *p != '\n'; p++)
          *p = ' ';
    }
  return out;
}

/* Top-level comma-separated arguments of the call whose '(' is at `open`. */
static GPtrArray *
split_args (const char *open)
{
  GPtrArray *args = g_ptr_array_new_with_free_func (g_free);
  int depth = 0;
  const char *start = open + 1;
  for (const char *p = open; *p; p++)
    {
      if (*p == '"' || *p == '\'')
        {
          if (!*(p = literal_end (p)))
            break;
        }
      else if (*p == '(' || *p == '[' || *p == '{')
        depth++;
      else if (*p == ')' || *p == ']' || *p == '}')
        {
          if (--depth == 0)
            {
              g_ptr_array_add (args, g_strstrip (g_strndup (start, p - start)));
              break;
            }
        }
      else if (*p == ',' && depth == 1)
        {
          g_ptr_array_add (args, g_strstrip (g_strndup (start, p - start)));
          start = p + 1;
        }
    }
  return args;
}

/* A C string literal's value ("..." with simple escapes), or NULL when `expr` is not one. */
static char *
literal_value (const char *expr)
{
  gsize n = strlen (expr);
  if (n < 2 || expr[0] != '"' || expr[n - 1] != '"')
    return NULL;
  g_autofree char *inner = g_strndup (expr + 1, n - 2);
  if (strchr (inner, '"'))
    return NULL;   /* concatenated literals: not a bus name */
  return g_strcompress (inner);
}

static void
collect_defines (GHashTable *table, const char *text)
{
  g_autoptr (GRegex) re = g_regex_new ("^[ \\t]*#[ \\t]*define[ \\t]+([A-Za-z_][A-Za-z0-9_]*)"
                                       "[ \\t]+(\"[^\"\\n]*\")[ \\t]*$",
                                       G_REGEX_MULTILINE, 0, NULL);
  g_autoptr (GMatchInfo) m = NULL;
  for (g_regex_match (re, text, 0, &m); g_match_info_matches (m); g_match_info_next (m, NULL))
    {
      char *ident = g_match_info_fetch (m, 1);
      g_autofree char *lit = g_match_info_fetch (m, 2);
      g_hash_table_replace (table, ident, literal_value (lit));
    }
}

/* The bus name an argument stands for (a literal, a #define of the file, else of any scanned
 * file); NULL with *skip set for NULL or a unique name. */
static char *
resolve_name (GHashTable *local, const char *expr, gboolean *skip)
{
  *skip = FALSE;
  char *lit = literal_value (expr);
  if (lit)
    return lit;
  const char *def = g_hash_table_lookup (local, expr);
  if (def == NULL)
    def = g_hash_table_lookup (defines, expr);
  if (def)
    return g_strdup (def);
  if (strcmp (expr, "NULL") == 0 || strstr (expr, "owner") || strstr (expr, "sender")
      || strstr (expr, "unique_name"))
    *skip = TRUE;
  return NULL;
}

/* Whether the call's bus (argument 0: a bus type or a connection) is the system bus. */
static gboolean
on_system_bus (const char *text, gsize call_at, const char *arg0)
{
  if (strstr (arg0, "G_BUS_TYPE_SYSTEM"))
    return TRUE;
  if (!g_regex_match_simple ("^[A-Za-z_][A-Za-z0-9_]*$", arg0, 0, 0))
    return FALSE;
  /* the enclosing function starts at the last "{" in column 0 before the call */
  const char *fn = text;
  for (const char *p = text; p < text + call_at; p++)
    if (p[0] == '\n' && p[1] == '{')
      fn = p;
  g_autofree char *body = g_strndup (fn, text + call_at - fn);
  g_autofree char *pattern = g_strdup_printf ("\\b%s\\s*=\\s*g_bus_get_sync\\s*\\(\\s*"
                                              "G_BUS_TYPE_SYSTEM", arg0);
  return g_regex_match_simple (pattern, body, 0, 0);
}

static int
line_of (const char *text, gsize at)
{
  int line = 1;
  for (gsize i = 0; i < at; i++)
    line += text[i] == '\n';
  return line;
}

static void
add_use (const char *name, const char *file, const char *text, gsize at, UseKind kind,
         gboolean system)
{
  BusUse *u = g_new0 (BusUse, 1);
  u->name = g_strdup (name);
  u->where = g_strdup_printf ("%s:%d", file, line_of (text, at));
  u->kind = kind;
  u->system = system;
  g_ptr_array_add (uses, u);
}

static void
scan_file (const char *rel, const char *raw)
{
  g_autofree char *text = strip_comments (raw);
  g_autoptr (GHashTable) local = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  collect_defines (local, text);
  g_autoptr (GRegex) re = g_regex_new ("\\b([a-z_]+)\\s*\\(", 0, 0, NULL);
  g_autoptr (GMatchInfo) m = NULL;
  for (g_regex_match (re, text, 0, &m); g_match_info_matches (m); g_match_info_next (m, NULL))
    {
      g_autofree char *func = g_match_info_fetch (m, 1);
      int start, end;
      g_match_info_fetch_pos (m, 0, &start, &end);
      for (guint c = 0; c < G_N_ELEMENTS (calls); c++)
        {
          if (strcmp (func, calls[c].func) != 0)
            continue;
          g_autoptr (GPtrArray) args = split_args (text + end - 1);
          if ((int) args->len <= calls[c].name_arg)
            continue;   /* a declaration or a name in a string: not a call */
          const char *expr = args->pdata[calls[c].name_arg];
          gboolean skip;
          g_autofree char *name = resolve_name (local, expr, &skip);
          if (name == NULL)
            {
              if (!skip)
                g_ptr_array_add (unresolved, g_strdup_printf ("%s:%d %s (%s)", rel,
                                                             line_of (text, start), func, expr));
              continue;
            }
          const gboolean system = on_system_bus (text, start, args->pdata[0]);
          add_use (name, rel, text, start, calls[c].kind, system);
          if (g_str_has_prefix (func, "g_bus_watch_name")
              && strstr (args->pdata[2], "G_BUS_NAME_WATCHER_FLAGS_AUTO_START"))
            add_use (name, rel, text, start, USE_ACTIVATE, system);
        }
    }
  /* g_object_new (..., "application-id", ID, ...) */
  g_autoptr (GRegex) prop = g_regex_new ("\"application-id\"\\s*,\\s*([A-Za-z_][A-Za-z0-9_]*|\"[^\"]*\")",
                                         0, 0, NULL);
  g_autoptr (GMatchInfo) pm = NULL;
  for (g_regex_match (prop, text, 0, &pm); g_match_info_matches (pm); g_match_info_next (pm, NULL))
    {
      g_autofree char *expr = g_match_info_fetch (pm, 1);
      int start, end;
      g_match_info_fetch_pos (pm, 0, &start, &end);
      gboolean skip;
      g_autofree char *name = resolve_name (local, expr, &skip);
      if (name)
        add_use (name, rel, text, start, USE_OWN, FALSE);
      else
        g_ptr_array_add (unresolved, g_strdup_printf ("%s:%d application-id (%s)", rel,
                                                           line_of (text, start), expr));
    }
}

/* Calls fn (relative path, contents) for every .c/.h file under dir (recursively). */
static void
for_each_source (const char *dir_rel, void (*fn) (const char *, const char *))
{
  g_autofree char *dir_path = g_build_filename (src_dir, dir_rel, NULL);
  g_autoptr (GDir) dir = g_dir_open (dir_path, 0, NULL);
  if (dir == NULL)
    return;
  const char *entry;
  while ((entry = g_dir_read_name (dir)))
    {
      g_autofree char *rel = g_build_filename (dir_rel, entry, NULL);
      g_autofree char *path = g_build_filename (src_dir, rel, NULL);
      if (g_file_test (path, G_FILE_TEST_IS_DIR))
        for_each_source (rel, fn);
      else if (g_str_has_suffix (entry, ".c") || g_str_has_suffix (entry, ".h"))
        {
          g_autofree char *text = NULL;
          g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
          fn (rel, text);
        }
    }
}

static void
define_file (const char *rel, const char *text)
{
  (void) rel;
  g_autofree char *clean = strip_comments (text);
  collect_defines (defines, clean);
}

static const char *
kind_name (UseKind k)
{
  return k == USE_OWN ? "owns" : k == USE_TALK ? "talks to" : "activates";
}

static void
test_names_allowed (void)
{
  g_assert_cmpuint (uses->len, >, 0);
  for (guint i = 0; i < unresolved->len; i++)
    g_test_message ("cannot tell the bus name of %s", (char *) unresolved->pdata[i]);
  g_assert_cmpuint (unresolved->len, ==, 0);
  guint bad = 0;
  for (guint i = 0; i < uses->len; i++)
    {
      BusUse *u = uses->pdata[i];
      const gboolean ok = u->kind == USE_TALK ? may_talk (u->name, u->system) : may_own (u->name);
      g_test_message ("%s %s %s%s: %s", u->where, kind_name (u->kind), u->name,
                      u->system ? " (system bus)" : "", ok ? "allowed" : "NOT allowed by the manifest");
      bad += !ok;
    }
  g_assert_cmpuint (bad, ==, 0);
}

/* data/NAME.service.in files: Name=NAME, exportable by Flatpak, owned by a GApplication. */
static void
test_service_files (void)
{
  g_autofree char *data = g_build_filename (src_dir, "data", NULL);
  g_autoptr (GDir) dir = g_dir_open (data, 0, NULL);
  g_assert_nonnull (dir);
  g_autoptr (GPtrArray) services = g_ptr_array_new_with_free_func (g_free);
  const char *entry;
  guint bad = 0;
  while ((entry = g_dir_read_name (dir)))
    {
      if (!g_str_has_suffix (entry, ".service.in"))
        continue;
      g_autofree char *path = g_build_filename (data, entry, NULL);
      g_autoptr (GKeyFile) kf = g_key_file_new ();
      g_assert_true (g_key_file_load_from_file (kf, path, 0, NULL));
      g_autofree char *name = g_key_file_get_string (kf, "D-BUS Service", "Name", NULL);
      g_autofree char *stem = g_strndup (entry, strlen (entry) - strlen (".service.in"));
      gboolean owned = FALSE;
      for (guint i = 0; i < uses->len; i++)
        {
          BusUse *u = uses->pdata[i];
          owned |= u->kind == USE_OWN && !u->system && g_strcmp0 (u->name, name) == 0;
        }
      const gboolean ok = g_strcmp0 (name, stem) == 0 && name && may_own (name) && owned;
      g_test_message ("data/%s: Name=%s, %s%s", entry, name,
                      name && may_own (name) ? "exported by Flatpak" : "NOT exported by Flatpak",
                      owned ? "" : ", owned by no GApplication of the project");
      bad += !ok;
      g_ptr_array_add (services, g_steal_pointer (&name));
    }
  for (guint i = 0; i < uses->len; i++)
    {
      BusUse *u = uses->pdata[i];
      if (u->kind != USE_ACTIVATE)
        continue;
      const gboolean has = g_ptr_array_find_with_equal_func (services, u->name, g_str_equal, NULL);
      g_test_message ("%s activates %s: %s", u->where, u->name,
                      has ? "data/ has its service file" : "NO service file in data/");
      bad += !has;
    }
  g_assert_cmpuint (bad, ==, 0);
}

static GPtrArray *
finish_arg_values (JsonArray *args, const char *prefix)
{
  GPtrArray *out = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < json_array_get_length (args); i++)
    {
      const char *a = json_array_get_string_element (args, i);
      if (g_str_has_prefix (a, prefix))
        g_ptr_array_add (out, g_strdup (a + strlen (prefix)));
    }
  return out;
}

int
main (int argc, char *argv[])
{
  g_autoptr (GError) error = NULL;
  g_autoptr (JsonParser) parser = json_parser_new ();

  g_test_init (&argc, &argv, NULL);
  src_dir = g_getenv ("HZ_SOURCE_DIR") ? g_getenv ("HZ_SOURCE_DIR") : ".";
  build_dir = g_getenv ("HZ_BUILD_DIR") ? g_getenv ("HZ_BUILD_DIR") : "build";
  g_autofree char *manifest = g_build_filename (src_dir, "flatpak", "ai.hanzo.Desktop.json", NULL);
  if (!json_parser_load_from_file (parser, manifest, &error))
    g_error ("%s: %s", manifest, error->message);
  JsonObject *root = json_node_get_object (json_parser_get_root (parser));
  app_id = g_strdup (json_object_get_string_member (root, "id"));
  JsonArray *args = json_object_get_array_member (root, "finish-args");
  own_names = finish_arg_values (args, "--own-name=");
  g_ptr_array_add (own_names, g_strdup_printf ("%s.*", app_id));
  talk_names = finish_arg_values (args, "--talk-name=");
  system_names = finish_arg_values (args, "--system-talk-name=");
  g_autoptr (GPtrArray) system_own = finish_arg_values (args, "--system-own-name=");
  g_ptr_array_extend_and_steal (system_names, g_steal_pointer (&system_own));

  defines = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  uses = g_ptr_array_new_with_free_func ((GDestroyNotify) bus_use_free);
  unresolved = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *config_h = g_build_filename (build_dir, "app", "hz-config.h", NULL);
  g_autofree char *config = NULL;
  if (g_file_get_contents (config_h, &config, NULL, NULL))
    collect_defines (defines, config);
  for (guint i = 0; i < G_N_ELEMENTS (scanned_dirs); i++)
    for_each_source (scanned_dirs[i], define_file);
  for (guint i = 0; i < G_N_ELEMENTS (scanned_dirs); i++)
    for_each_source (scanned_dirs[i], scan_file);

  g_test_add_func ("/flatpak/bus-names/allowed", test_names_allowed);
  g_test_add_func ("/flatpak/bus-names/service-files", test_service_files);
  const int ret = g_test_run ();
  g_ptr_array_unref (uses);
  g_ptr_array_unref (unresolved);
  g_hash_table_unref (defines);
  g_ptr_array_unref (own_names);
  g_ptr_array_unref (talk_names);
  g_ptr_array_unref (system_names);
  g_free (app_id);
  return ret;
}
