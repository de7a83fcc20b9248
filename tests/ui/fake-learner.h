/* tests/ui/fake-learner.h — a fake hanzo-learner daemon for UI tests (header-only): exports
 * learner/ai.hanzo.Desktop.Learner.xml at /ai/hanzo/Desktop/Learner on its own connection to
 * the session bus and owns ai.hanzo.Desktop.Learner, so the app (same process, another
 * connection) sees it as it would see the real daemon. Records every method call in order; Pause/Resume/LearnNow
 * change State (and emit PropertiesChanged; LearnNow fails as the daemon's does when
 * `no_model` or `never_learn` is set); Rollback answers "/tmp/hz-adapter-prev".
 * Main thread only.
 */
#pragma once

#include <gio/gio.h>
#include "hz-learner.h"   /* HZ_LEARNER_BUS_NAME, _OBJECT_PATH, _INTERFACE */

typedef struct {
  GDBusConnection *conn;
  GDBusNodeInfo   *info;
  guint            reg_id, own_id;
  gboolean         owned;
  GPtrArray       *calls;       /* method names (char*), in call order */
  char            *state;
  double           progress;
  gint64           next_run;
  gboolean         never_learn;
  const char      *no_model;    /* set: LearnNow answers Error.NoModel with this text */
} FakeLearner;

static void
fake_learner_changed (FakeLearner *fl, const char *name, GVariant *value)
{
  GVariantBuilder b;
  g_variant_builder_init (&b, G_VARIANT_TYPE ("a{sv}"));
  g_variant_builder_add (&b, "{sv}", name, value);
  g_dbus_connection_emit_signal (fl->conn, NULL, HZ_LEARNER_OBJECT_PATH,
                                 "org.freedesktop.DBus.Properties", "PropertiesChanged",
                                 g_variant_new ("(sa{sv}as)", HZ_LEARNER_INTERFACE, &b, NULL),
                                 NULL);
}

static void
fake_learner_set_state (FakeLearner *fl, const char *state)
{
  g_free (fl->state);
  fl->state = g_strdup (state);
  fake_learner_changed (fl, "State", g_variant_new_string (state));
}

static void
fake_learner_method (GDBusConnection *c, const char *sender, const char *path, const char *iface,
                     const char *method, GVariant *params, GDBusMethodInvocation *inv,
                     gpointer data)
{
  FakeLearner *fl = data;
  g_ptr_array_add (fl->calls, g_strdup (method));
  if (g_str_equal (method, "Pause"))
    fake_learner_set_state (fl, "paused");
  else if (g_str_equal (method, "Resume"))
    fake_learner_set_state (fl, "idle");
  else if (g_str_equal (method, "LearnNow"))
    {
      if (fl->no_model != NULL)
        {
          g_dbus_method_invocation_return_dbus_error (inv, HZ_LEARNER_INTERFACE ".Error.NoModel",
                                                      fl->no_model);
          return;
        }
      if (fl->never_learn)
        {
          g_dbus_method_invocation_return_dbus_error (inv, HZ_LEARNER_INTERFACE ".Error.NotAllowed",
                                                      "learning is switched off");
          return;
        }
      fl->progress = 0.25;
      fake_learner_changed (fl, "Progress", g_variant_new_double (fl->progress));
      fake_learner_set_state (fl, "running");
    }
  else if (g_str_equal (method, "Rollback"))
    {
      g_dbus_method_invocation_return_value (inv, g_variant_new ("(s)", "/tmp/hz-adapter-prev"));
      return;
    }
  g_dbus_method_invocation_return_value (inv, NULL);
}

static GVariant *
fake_learner_get (GDBusConnection *c, const char *sender, const char *path, const char *iface,
                  const char *prop, GError **error, gpointer data)
{
  FakeLearner *fl = data;
  if (g_str_equal (prop, "State"))
    return g_variant_new_string (fl->state);
  if (g_str_equal (prop, "Reason"))
    return g_variant_new_string (fl->never_learn ? "disabled" : "wait-window");
  if (g_str_equal (prop, "Progress"))
    return g_variant_new_double (fl->progress);
  if (g_str_equal (prop, "NextRun"))
    return g_variant_new_int64 (fl->next_run);
  if (g_str_equal (prop, "NeverLearn"))
    return g_variant_new_boolean (fl->never_learn);
  g_set_error (error, G_DBUS_ERROR, G_DBUS_ERROR_UNKNOWN_PROPERTY, "no %s", prop);
  return NULL;
}

static gboolean
fake_learner_set (GDBusConnection *c, const char *sender, const char *path, const char *iface,
                  const char *prop, GVariant *value, GError **error, gpointer data)
{
  FakeLearner *fl = data;
  if (!g_str_equal (prop, "NeverLearn"))
    {
      g_set_error (error, G_DBUS_ERROR, G_DBUS_ERROR_PROPERTY_READ_ONLY, "%s is read-only", prop);
      return FALSE;
    }
  fl->never_learn = g_variant_get_boolean (value);
  g_ptr_array_add (fl->calls, g_strdup (fl->never_learn ? "Set NeverLearn true"
                                                        : "Set NeverLearn false"));
  fake_learner_changed (fl, "NeverLearn", g_variant_new_boolean (fl->never_learn));
  fake_learner_set_state (fl, fl->never_learn ? "disabled" : "idle");
  return TRUE;
}

static void
fake_learner_acquired (GDBusConnection *c, const char *name, gpointer data)
{
  ((FakeLearner *) data)->owned = TRUE;
}

static gboolean
fake_learner_is_owned (gpointer data)
{
  return ((FakeLearner *) data)->owned;
}

/** Start the fake daemon and wait (iterating the default main context) until it owns the
 *  name. */
static inline FakeLearner *
fake_learner_start (void)
{
  static const GDBusInterfaceVTable vtable = {
    fake_learner_method, fake_learner_get, fake_learner_set, { 0 }
  };
  g_autoptr(GError) error = NULL;
  FakeLearner *fl = g_new0 (FakeLearner, 1);
  g_autofree char *xml_path = g_build_filename (g_getenv ("HZ_SOURCE_DIR"), "learner",
                                                "ai.hanzo.Desktop.Learner.xml", NULL);
  g_autofree char *xml = NULL;
  g_assert_true (g_file_get_contents (xml_path, &xml, NULL, &error));
  fl->info = g_dbus_node_info_new_for_xml (xml, &error);
  g_assert_no_error (error);

  g_autofree char *address = g_dbus_address_get_for_bus_sync (G_BUS_TYPE_SESSION, NULL, &error);
  g_assert_no_error (error);
  fl->conn = g_dbus_connection_new_for_address_sync (
    address, G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT |
             G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION, NULL, NULL, &error);
  g_assert_no_error (error);
  fl->calls = g_ptr_array_new_with_free_func (g_free);
  fl->state = g_strdup ("idle");
  fl->next_run = g_get_real_time () / G_USEC_PER_SEC + 3600;
  fl->reg_id = g_dbus_connection_register_object (
    fl->conn, HZ_LEARNER_OBJECT_PATH,
    g_dbus_node_info_lookup_interface (fl->info, HZ_LEARNER_INTERFACE),
    &vtable, fl, NULL, &error);
  g_assert_no_error (error);
  fl->own_id = g_bus_own_name_on_connection (fl->conn, HZ_LEARNER_BUS_NAME,
                                             G_BUS_NAME_OWNER_FLAGS_NONE,
                                             fake_learner_acquired, NULL, fl, NULL);
  g_assert_true (hz_ui_wait_for (fake_learner_is_owned, fl, 10));
  return fl;
}

/** Number of calls of `method` so far. */
static inline guint
fake_learner_count (FakeLearner *fl, const char *method)
{
  guint n = 0;
  for (guint i = 0; i < fl->calls->len; i++)
    n += g_str_equal (fl->calls->pdata[i], method);
  return n;
}

static inline void
fake_learner_stop (FakeLearner *fl)
{
  if (fl->own_id != 0)
    g_bus_unown_name (fl->own_id);
  g_dbus_connection_unregister_object (fl->conn, fl->reg_id);
  g_dbus_connection_close_sync (fl->conn, NULL, NULL);
  g_object_unref (fl->conn);
  g_dbus_node_info_unref (fl->info);
  g_ptr_array_unref (fl->calls);
  g_free (fl->state);
  g_free (fl);
}
