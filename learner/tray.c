/* learner/tray.c — StatusNotifierItem + dbusmenu over GDBus; see tray.h. */
#include "tray.h"

#include <glib/gi18n.h>
#include <math.h>

#define ITEM_PATH "/StatusNotifierItem"
#define MENU_PATH "/MenuBar"
#define ITEM_IFACE "org.kde.StatusNotifierItem"
#define MENU_IFACE "com.canonical.dbusmenu"
#define WATCHER_NAME "org.kde.StatusNotifierWatcher"
#define WATCHER_PATH "/StatusNotifierWatcher"

static const char introspection_xml[] =
  "<node>"
  " <interface name='org.kde.StatusNotifierItem'>"
  "  <property name='Category' type='s' access='read'/>"
  "  <property name='Id' type='s' access='read'/>"
  "  <property name='Title' type='s' access='read'/>"
  "  <property name='Status' type='s' access='read'/>"
  "  <property name='WindowId' type='i' access='read'/>"
  "  <property name='IconName' type='s' access='read'/>"
  "  <property name='IconThemePath' type='s' access='read'/>"
  "  <property name='ToolTip' type='(sa(iiay)ss)' access='read'/>"
  "  <property name='ItemIsMenu' type='b' access='read'/>"
  "  <property name='Menu' type='o' access='read'/>"
  "  <method name='ContextMenu'><arg type='i' direction='in'/><arg type='i' direction='in'/></method>"
  "  <method name='Activate'><arg type='i' direction='in'/><arg type='i' direction='in'/></method>"
  "  <method name='SecondaryActivate'><arg type='i' direction='in'/><arg type='i' direction='in'/></method>"
  "  <method name='Scroll'><arg type='i' direction='in'/><arg type='s' direction='in'/></method>"
  "  <signal name='NewTitle'/><signal name='NewIcon'/><signal name='NewToolTip'/>"
  "  <signal name='NewStatus'><arg type='s'/></signal>"
  " </interface>"
  " <interface name='com.canonical.dbusmenu'>"
  "  <property name='Version' type='u' access='read'/>"
  "  <property name='TextDirection' type='s' access='read'/>"
  "  <property name='Status' type='s' access='read'/>"
  "  <property name='IconThemePath' type='as' access='read'/>"
  "  <method name='GetLayout'>"
  "   <arg type='i' name='parentId' direction='in'/><arg type='i' name='recursionDepth' direction='in'/>"
  "   <arg type='as' name='propertyNames' direction='in'/>"
  "   <arg type='u' name='revision' direction='out'/><arg type='(ia{sv}av)' name='layout' direction='out'/>"
  "  </method>"
  "  <method name='GetGroupProperties'>"
  "   <arg type='ai' name='ids' direction='in'/><arg type='as' name='propertyNames' direction='in'/>"
  "   <arg type='a(ia{sv})' name='properties' direction='out'/>"
  "  </method>"
  "  <method name='GetProperty'>"
  "   <arg type='i' name='id' direction='in'/><arg type='s' name='name' direction='in'/>"
  "   <arg type='v' name='value' direction='out'/>"
  "  </method>"
  "  <method name='Event'>"
  "   <arg type='i' name='id' direction='in'/><arg type='s' name='eventId' direction='in'/>"
  "   <arg type='v' name='data' direction='in'/><arg type='u' name='timestamp' direction='in'/>"
  "  </method>"
  "  <method name='EventGroup'>"
  "   <arg type='a(isvu)' name='events' direction='in'/><arg type='ai' name='idErrors' direction='out'/>"
  "  </method>"
  "  <method name='AboutToShow'>"
  "   <arg type='i' name='id' direction='in'/><arg type='b' name='needUpdate' direction='out'/>"
  "  </method>"
  "  <method name='AboutToShowGroup'>"
  "   <arg type='ai' name='ids' direction='in'/><arg type='ai' name='updatesNeeded' direction='out'/>"
  "   <arg type='ai' name='idErrors' direction='out'/>"
  "  </method>"
  "  <signal name='ItemsPropertiesUpdated'>"
  "   <arg type='a(ia{sv})' name='updatedProps'/><arg type='a(ias)' name='removedProps'/>"
  "  </signal>"
  "  <signal name='LayoutUpdated'><arg type='u' name='revision'/><arg type='i' name='parent'/></signal>"
  "  <signal name='ItemActivationRequested'><arg type='i' name='id'/><arg type='u' name='timestamp'/></signal>"
  " </interface>"
  "</node>";

/* The menu: item ids are the indices of this table (0 is the root). */
enum { ID_ROOT, ID_PROGRESS, ID_SEP1, ID_PAUSE, ID_OPEN, ID_SEP2, ID_QUIT, N_ITEMS };

struct _HzTray {
  GDBusConnection *conn;
  GDBusNodeInfo   *info;
  guint            item_reg, menu_reg, watch_id;
  char            *icon_name;
  HzTrayActionFunc func;
  gpointer         user_data;
  GCancellable    *cancellable;
  gboolean         registered;
  guint            revision;
  /* shown state */
  char            *state;
  int              percent;   /* -1: no running job */
};

static gboolean
is_paused (const HzTray *t)
{
  return g_strcmp0 (t->state, "paused") == 0;
}

static char *
progress_label (const HzTray *t)
{
  if (g_strcmp0 (t->state, "running") == 0)
    /* TRANSLATORS: tray menu, the nightly learner's progress */
    return g_strdup_printf (_("Learning: %d %%"), MAX (t->percent, 0));
  if (is_paused (t))
    return g_strdup (_("Learning paused"));
  if (g_strcmp0 (t->state, "disabled") == 0)
    return g_strdup (_("Learning is off"));
  return g_strdup (_("Waiting for tonight"));
}

/* The a{sv} properties of one menu item. */
static GVariant *
item_props (const HzTray *t, int id)
{
  GVariantBuilder b;
  g_variant_builder_init (&b, G_VARIANT_TYPE ("a{sv}"));
  switch (id)
    {
    case ID_ROOT:
      g_variant_builder_add (&b, "{sv}", "children-display", g_variant_new_string ("submenu"));
      break;
    case ID_PROGRESS:
      g_variant_builder_add (&b, "{sv}", "label", g_variant_new_take_string (progress_label (t)));
      g_variant_builder_add (&b, "{sv}", "enabled", g_variant_new_boolean (FALSE));
      break;
    case ID_SEP1:
    case ID_SEP2:
      g_variant_builder_add (&b, "{sv}", "type", g_variant_new_string ("separator"));
      break;
    case ID_PAUSE:
      g_variant_builder_add (&b, "{sv}", "label",
                             g_variant_new_string (is_paused (t) ? _("_Resume Learning")
                                                                 : _("_Pause Learning")));
      g_variant_builder_add (&b, "{sv}", "enabled",
                             g_variant_new_boolean (g_strcmp0 (t->state, "disabled") != 0));
      break;
    case ID_OPEN:
      g_variant_builder_add (&b, "{sv}", "label", g_variant_new_string (_("_Open Hanzo")));
      break;
    case ID_QUIT:
      g_variant_builder_add (&b, "{sv}", "label", g_variant_new_string (_("_Quit Learner")));
      break;
    default:
      break;
    }
  return g_variant_builder_end (&b);
}

/* (ia{sv}av) of item `id` with its children when depth != 0. */
static GVariant *
layout_of (const HzTray *t, int id, int depth)
{
  GVariantBuilder kids;
  g_variant_builder_init (&kids, G_VARIANT_TYPE ("av"));
  if (id == ID_ROOT && depth != 0)
    for (int k = ID_PROGRESS; k < N_ITEMS; k++)
      g_variant_builder_add (&kids, "v", layout_of (t, k, depth - 1));
  return g_variant_new ("(i@a{sv}av)", id, item_props (t, id), &kids);
}

static void
emit_menu_props (HzTray *t, int id)
{
  GVariantBuilder upd;
  g_variant_builder_init (&upd, G_VARIANT_TYPE ("a(ia{sv})"));
  g_variant_builder_add (&upd, "(i@a{sv})", id, item_props (t, id));
  g_dbus_connection_emit_signal (t->conn, NULL, MENU_PATH, MENU_IFACE, "ItemsPropertiesUpdated",
                                 g_variant_new ("(a(ia{sv})a(ias))", &upd, NULL), NULL);
}

static void
act (HzTray *t, HzTrayAction a)
{
  if (t->func)
    t->func (a, t->user_data);
}

static void
menu_event (HzTray *t, int id, const char *event)
{
  if (g_strcmp0 (event, "clicked") != 0)
    return;
  switch (id)
    {
    case ID_PAUSE:
      act (t, is_paused (t) ? HZ_TRAY_ACTION_RESUME : HZ_TRAY_ACTION_PAUSE);
      break;
    case ID_OPEN:
      act (t, HZ_TRAY_ACTION_OPEN);
      break;
    case ID_QUIT:
      act (t, HZ_TRAY_ACTION_QUIT);
      break;
    default:
      break;
    }
}

static void
method_call (GDBusConnection *conn, const char *sender, const char *path, const char *iface,
             const char *method, GVariant *params, GDBusMethodInvocation *inv, gpointer data)
{
  HzTray *t = data;
  if (g_strcmp0 (iface, ITEM_IFACE) == 0)
    {
      if (g_strcmp0 (method, "Activate") == 0 || g_strcmp0 (method, "SecondaryActivate") == 0)
        act (t, HZ_TRAY_ACTION_OPEN);
      /* ContextMenu: hosts show the Menu themselves; Scroll: nothing to scroll */
      g_dbus_method_invocation_return_value (inv, NULL);
      return;
    }
  if (g_strcmp0 (method, "GetLayout") == 0)
    {
      int parent, depth;
      g_variant_get (params, "(ii^a&s)", &parent, &depth, NULL);
      if (parent < 0 || parent >= N_ITEMS)
        {
          g_dbus_method_invocation_return_error (inv, G_DBUS_ERROR, G_DBUS_ERROR_INVALID_ARGS,
                                                 "no menu item %d", parent);
          return;
        }
      g_dbus_method_invocation_return_value (inv, g_variant_new ("(u@(ia{sv}av))", t->revision,
                                                                 layout_of (t, parent, depth)));
    }
  else if (g_strcmp0 (method, "GetGroupProperties") == 0)
    {
      g_autoptr (GVariantIter) ids = NULL;
      int id;
      GVariantBuilder b;
      g_variant_get (params, "(ai^a&s)", &ids, NULL);
      g_variant_builder_init (&b, G_VARIANT_TYPE ("a(ia{sv})"));
      while (g_variant_iter_next (ids, "i", &id))
        if (id >= 0 && id < N_ITEMS)
          g_variant_builder_add (&b, "(i@a{sv})", id, item_props (t, id));
      g_dbus_method_invocation_return_value (inv, g_variant_new ("(a(ia{sv}))", &b));
    }
  else if (g_strcmp0 (method, "GetProperty") == 0)
    {
      int id;
      const char *name;
      g_variant_get (params, "(i&s)", &id, &name);
      g_autoptr (GVariant) props = id >= 0 && id < N_ITEMS ? g_variant_ref_sink (item_props (t, id)) : NULL;
      g_autoptr (GVariant) v = props ? g_variant_lookup_value (props, name, NULL) : NULL;
      if (v == NULL)
        g_dbus_method_invocation_return_error (inv, G_DBUS_ERROR, G_DBUS_ERROR_INVALID_ARGS,
                                               "menu item %d has no property '%s'", id, name);
      else
        g_dbus_method_invocation_return_value (inv, g_variant_new ("(v)", v));
    }
  else if (g_strcmp0 (method, "Event") == 0)
    {
      int id;
      const char *event;
      g_variant_get (params, "(i&svu)", &id, &event, NULL, NULL);
      g_dbus_method_invocation_return_value (inv, NULL);
      menu_event (t, id, event);
    }
  else if (g_strcmp0 (method, "EventGroup") == 0)
    {
      g_autoptr (GVariantIter) events = NULL;
      GVariantBuilder errors;
      int id;
      const char *event;
      g_variant_get (params, "(a(isvu))", &events);
      g_variant_builder_init (&errors, G_VARIANT_TYPE ("ai"));
      g_autoptr (GArray) ok = g_array_new (FALSE, FALSE, sizeof (int));
      g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
      while (g_variant_iter_next (events, "(i&svu)", &id, &event, NULL, NULL))
        if (id < 0 || id >= N_ITEMS)
          g_variant_builder_add (&errors, "i", id);
        else
          {
            g_array_append_val (ok, id);
            g_ptr_array_add (names, g_strdup (event));
          }
      g_dbus_method_invocation_return_value (inv, g_variant_new ("(ai)", &errors));
      for (guint i = 0; i < ok->len; i++)
        menu_event (t, g_array_index (ok, int, i), names->pdata[i]);
    }
  else if (g_strcmp0 (method, "AboutToShow") == 0)
    g_dbus_method_invocation_return_value (inv, g_variant_new ("(b)", FALSE));
  else if (g_strcmp0 (method, "AboutToShowGroup") == 0)
    g_dbus_method_invocation_return_value (inv, g_variant_new ("(@ai@ai)",
                                           g_variant_new_array (G_VARIANT_TYPE_INT32, NULL, 0),
                                           g_variant_new_array (G_VARIANT_TYPE_INT32, NULL, 0)));
  else
    g_dbus_method_invocation_return_error (inv, G_DBUS_ERROR, G_DBUS_ERROR_UNKNOWN_METHOD,
                                           "unknown method %s", method);
}

static char *
tooltip_text (const HzTray *t)
{
  g_autofree char *p = progress_label (t);
  return g_strdup_printf ("%s — %s", _("Hanzo Learner"), p);
}

static GVariant *
get_property (GDBusConnection *conn, const char *sender, const char *path, const char *iface,
              const char *prop, GError **error, gpointer data)
{
  HzTray *t = data;
  if (g_strcmp0 (iface, MENU_IFACE) == 0)
    {
      if (g_strcmp0 (prop, "Version") == 0)
        return g_variant_new_uint32 (3);
      if (g_strcmp0 (prop, "TextDirection") == 0)
        /* the translation of this marker says the locale's direction, as GTK does it */
        return g_variant_new_string (g_strcmp0 (C_("text direction", "ltr"), "rtl") == 0 ? "rtl" : "ltr");
      if (g_strcmp0 (prop, "Status") == 0)
        return g_variant_new_string ("normal");
      if (g_strcmp0 (prop, "IconThemePath") == 0)
        return g_variant_new_strv (NULL, 0);
    }
  else if (g_strcmp0 (prop, "Category") == 0)
    return g_variant_new_string ("SystemServices");
  else if (g_strcmp0 (prop, "Id") == 0)
    return g_variant_new_string ("hanzo-learner");
  else if (g_strcmp0 (prop, "Title") == 0)
    return g_variant_new_string (_("Hanzo Learner"));
  else if (g_strcmp0 (prop, "Status") == 0)
    return g_variant_new_string (g_strcmp0 (t->state, "running") == 0 ? "Active" : "Passive");
  else if (g_strcmp0 (prop, "WindowId") == 0)
    return g_variant_new_int32 (0);
  else if (g_strcmp0 (prop, "IconName") == 0)
    return g_variant_new_string (t->icon_name);
  else if (g_strcmp0 (prop, "IconThemePath") == 0)
    return g_variant_new_string ("");
  else if (g_strcmp0 (prop, "ToolTip") == 0)
    {
      g_autofree char *text = tooltip_text (t);
      return g_variant_new ("(s@a(iiay)ss)", t->icon_name,
                            g_variant_new_array (G_VARIANT_TYPE ("(iiay)"), NULL, 0),
                            _("Hanzo Learner"), text);
    }
  else if (g_strcmp0 (prop, "ItemIsMenu") == 0)
    return g_variant_new_boolean (FALSE);
  else if (g_strcmp0 (prop, "Menu") == 0)
    return g_variant_new_object_path (MENU_PATH);
  g_set_error (error, G_DBUS_ERROR, G_DBUS_ERROR_UNKNOWN_PROPERTY, "unknown property %s", prop);
  return NULL;
}

static const GDBusInterfaceVTable vtable = { method_call, get_property, NULL, { 0 } };

static void
registered_cb (GObject *source, GAsyncResult *res, gpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GVariant) r = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), res, &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  HzTray *t = data;
  t->registered = r != NULL;
  if (error)
    g_message ("tray: the StatusNotifierWatcher refused the item: %s", error->message);
}

static void
watcher_appeared (GDBusConnection *conn, const char *name, const char *owner, gpointer data)
{
  HzTray *t = data;
  g_dbus_connection_call (conn, WATCHER_NAME, WATCHER_PATH, WATCHER_NAME,
                          "RegisterStatusNotifierItem",
                          g_variant_new ("(s)", g_dbus_connection_get_unique_name (conn)), NULL,
                          G_DBUS_CALL_FLAGS_NONE, 5000, t->cancellable, registered_cb, t);
}

static void
watcher_vanished (GDBusConnection *conn, const char *name, gpointer data)
{
  ((HzTray *) data)->registered = FALSE;
}

HzTray *
hz_tray_new (GDBusConnection *conn, const char *icon_name, HzTrayActionFunc func,
             gpointer user_data, GError **error)
{
  g_autoptr (HzTray) t = g_new0 (HzTray, 1);
  t->conn = g_object_ref (conn);
  t->icon_name = g_strdup (icon_name);
  t->func = func;
  t->user_data = user_data;
  t->state = g_strdup ("idle");
  t->percent = -1;
  t->revision = 1;
  t->cancellable = g_cancellable_new ();
  if (!(t->info = g_dbus_node_info_new_for_xml (introspection_xml, error)))
    return NULL;
  t->item_reg = g_dbus_connection_register_object (conn, ITEM_PATH, t->info->interfaces[0],
                                                   &vtable, t, NULL, error);
  if (t->item_reg == 0)
    return NULL;
  t->menu_reg = g_dbus_connection_register_object (conn, MENU_PATH, t->info->interfaces[1],
                                                   &vtable, t, NULL, error);
  if (t->menu_reg == 0)
    return NULL;
  t->watch_id = g_bus_watch_name_on_connection (conn, WATCHER_NAME, G_BUS_NAME_WATCHER_FLAGS_NONE,
                                                watcher_appeared, watcher_vanished, t, NULL);
  return g_steal_pointer (&t);
}

void
hz_tray_free (HzTray *t)
{
  if (t == NULL)
    return;
  g_cancellable_cancel (t->cancellable);
  if (t->watch_id)
    g_bus_unwatch_name (t->watch_id);
  if (t->item_reg)
    g_dbus_connection_unregister_object (t->conn, t->item_reg);
  if (t->menu_reg)
    g_dbus_connection_unregister_object (t->conn, t->menu_reg);
  g_clear_pointer (&t->info, g_dbus_node_info_unref);
  g_clear_object (&t->cancellable);
  g_clear_object (&t->conn);
  g_free (t->icon_name);
  g_free (t->state);
  g_free (t);
}

void
hz_tray_update (HzTray *t, const char *state, double progress)
{
  const int percent = isfinite (progress) ? (int) lround (CLAMP (progress, 0.0, 1.0) * 100) : 0;
  const gboolean state_changed = g_strcmp0 (state, t->state) != 0;
  const gboolean was_active = g_strcmp0 (t->state, "running") == 0;
  if (!state_changed && percent == t->percent)
    return;
  g_free (t->state);
  t->state = g_strdup (state ? state : "idle");
  t->percent = percent;
  emit_menu_props (t, ID_PROGRESS);
  g_dbus_connection_emit_signal (t->conn, NULL, ITEM_PATH, ITEM_IFACE, "NewToolTip", NULL, NULL);
  if (state_changed)
    {
      emit_menu_props (t, ID_PAUSE);
      if (was_active != (g_strcmp0 (t->state, "running") == 0))
        g_dbus_connection_emit_signal (t->conn, NULL, ITEM_PATH, ITEM_IFACE, "NewStatus",
                                       g_variant_new ("(s)", g_strcmp0 (t->state, "running") == 0
                                                                 ? "Active" : "Passive"),
                                       NULL);
    }
}

gboolean
hz_tray_is_registered (HzTray *t)
{
  return t->registered;
}
