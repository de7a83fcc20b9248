/* hz-learner.c — HzLearner (see hz-learner.h). */
#include "hz-learner.h"

#include <glib/gi18n.h>

struct _HzLearner {
  GObject       parent_instance;
  guint         watch_id;
  GDBusProxy   *proxy;         /* NULL while the daemon is absent */
  GCancellable *cancellable;   /* of the proxy creation */
  guint         holds;
  gboolean      paused;        /* we called Pause and owe a Resume */
};

G_DEFINE_FINAL_TYPE (HzLearner, hz_learner, G_TYPE_OBJECT)

enum { PROP_0, PROP_PRESENT, PROP_STATE, PROP_PROGRESS, PROP_NEXT_RUN, PROP_NEVER_LEARN, N_PROPS };
static GParamSpec *props[N_PROPS];

enum { SIG_CALL_FAILED, SIG_ACTIVE_ADAPTER_CHANGED, SIG_SHARED_ADAPTER_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void
notify_all (HzLearner *self)
{
  for (guint i = 1; i < N_PROPS; i++)
    g_object_notify_by_pspec (G_OBJECT (self), props[i]);
}

static GVariant *
cached (HzLearner *self, const char *name, const GVariantType *type)
{
  if (self->proxy == NULL)
    return NULL;
  GVariant *v = g_dbus_proxy_get_cached_property (self->proxy, name);
  if (v != NULL && !g_variant_is_of_type (v, type))
    g_clear_pointer (&v, g_variant_unref);
  return v;
}

/* ------------------------------------------------------------------ calls */

typedef struct {
  HzLearner *self;
  char      *method;
  void     (*callback) (const char *path, const GError *error, gpointer data);
  gpointer   data;
} Call;

static void
call_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Call *call = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) ret = g_dbus_proxy_call_finish (G_DBUS_PROXY (source), result, &error);

  if (ret == NULL)
    {
      g_dbus_error_strip_remote_error (error);
      if (call->self != NULL)
        g_signal_emit (call->self, signals[SIG_CALL_FAILED], 0, call->method, error->message);
    }
  else if (call->self != NULL && g_strcmp0 (call->method, "Rollback") == 0 &&
           g_variant_is_of_type (ret, G_VARIANT_TYPE ("(s)")))
    {
      /* the daemon made another adapter active: whoever serves follows */
      const char *active = NULL;
      g_variant_get (ret, "(&s)", &active);
      g_signal_emit (call->self, signals[SIG_ACTIVE_ADAPTER_CHANGED], 0, active);
    }
  if (call->callback != NULL)
    {
      const char *path = NULL;
      if (ret != NULL && g_variant_is_of_type (ret, G_VARIANT_TYPE ("(s)")))
        g_variant_get (ret, "(&s)", &path);
      call->callback (ret ? (path ? path : "") : NULL, error, call->data);
    }
  g_clear_weak_pointer (&call->self);
  g_free (call->method);
  g_free (call);
}

static void
call_method (HzLearner *self, const char *method,
             void (*callback) (const char *, const GError *, gpointer), gpointer data)
{
  if (self->proxy == NULL)
    {
      if (callback != NULL)
        {
          g_autoptr(GError) error = g_error_new_literal (G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                                                         _("The learner is not running"));
          callback (NULL, error, data);
        }
      return;
    }
  Call *call = g_new0 (Call, 1);
  g_set_weak_pointer (&call->self, self);
  call->method = g_strdup (method);
  call->callback = callback;
  call->data = data;
  g_dbus_proxy_call (self->proxy, method, NULL, G_DBUS_CALL_FLAGS_NONE, -1, NULL,
                     call_done, call);
}

/* ------------------------------------------------------------------ bus watching */

static void
on_properties_changed (GDBusProxy *proxy, GVariant *changed, GStrv invalidated, HzLearner *self)
{
  notify_all (self);
}

/* AdapterReady(s) and SharedAdapterReady(s, t) from the daemon */
static void
on_g_signal (GDBusProxy *proxy, const char *sender, const char *name, GVariant *params,
             HzLearner *self)
{
  if (g_strcmp0 (name, "AdapterReady") == 0 && g_variant_is_of_type (params, G_VARIANT_TYPE ("(s)")))
    {
      const char *path;
      g_variant_get (params, "(&s)", &path);
      g_signal_emit (self, signals[SIG_ACTIVE_ADAPTER_CHANGED], 0, path);
    }
  else if (g_strcmp0 (name, "SharedAdapterReady") == 0 &&
           g_variant_is_of_type (params, G_VARIANT_TYPE ("(st)")))
    {
      const char *path;
      guint64 round;
      g_variant_get (params, "(&st)", &path, &round);
      g_signal_emit (self, signals[SIG_SHARED_ADAPTER_CHANGED], 0, path, round);
    }
}

static void
proxy_ready (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HzLearner) self = user_data;  /* the ref taken for this call */
  GDBusProxy *proxy = g_dbus_proxy_new_finish (result, &error);

  if (proxy == NULL)
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_message ("learner: %s", error->message);
      return;
    }
  if (self->watch_id == 0 || self->cancellable == NULL ||
      g_cancellable_is_cancelled (self->cancellable))
    {
      g_object_unref (proxy);  /* disposed or vanished meanwhile */
      return;
    }
  g_clear_object (&self->proxy);
  self->proxy = proxy;
  g_signal_connect (proxy, "g-properties-changed", G_CALLBACK (on_properties_changed), self);
  g_signal_connect (proxy, "g-signal", G_CALLBACK (on_g_signal), self);
  /* A generation already running when the daemon appears pauses it too. */
  if (self->holds > 0 && !self->paused)
    {
      self->paused = TRUE;
      call_method (self, "Pause", NULL, NULL);
    }
  notify_all (self);
}

static void
on_name_appeared (GDBusConnection *connection, const char *name, const char *owner,
                  gpointer user_data)
{
  HzLearner *self = user_data;

  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  self->cancellable = g_cancellable_new ();
  g_dbus_proxy_new (connection, G_DBUS_PROXY_FLAGS_GET_INVALIDATED_PROPERTIES, NULL, owner,
                    HZ_LEARNER_OBJECT_PATH, HZ_LEARNER_INTERFACE, self->cancellable,
                    proxy_ready, g_object_ref (self));
}

static void
on_name_vanished (GDBusConnection *connection, const char *name, gpointer user_data)
{
  HzLearner *self = user_data;
  gboolean was = self->proxy != NULL;

  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  if (self->proxy != NULL)
    g_signal_handlers_disconnect_by_data (self->proxy, self);
  g_clear_object (&self->proxy);
  self->paused = FALSE;
  if (was)
    notify_all (self);
}

/* ------------------------------------------------------------------ public API */

HzLearner *
hz_learner_new (void)
{
  return g_object_new (HZ_TYPE_LEARNER, NULL);
}

gboolean
hz_learner_is_present (HzLearner *self)
{
  g_return_val_if_fail (HZ_IS_LEARNER (self), FALSE);
  return self->proxy != NULL;
}

static const char *
string_prop (HzLearner *self, const char *name)
{
  g_autoptr(GVariant) v = cached (self, name, G_VARIANT_TYPE_STRING);
  /* Interned: the set of values is small and fixed. */
  return v ? g_intern_string (g_variant_get_string (v, NULL)) : "";
}

const char *
hz_learner_get_state (HzLearner *self)
{
  g_return_val_if_fail (HZ_IS_LEARNER (self), "");
  return string_prop (self, "State");
}

const char *
hz_learner_get_reason (HzLearner *self)
{
  g_return_val_if_fail (HZ_IS_LEARNER (self), "");
  return string_prop (self, "Reason");
}

double
hz_learner_get_progress (HzLearner *self)
{
  g_return_val_if_fail (HZ_IS_LEARNER (self), 0);
  g_autoptr(GVariant) v = cached (self, "Progress", G_VARIANT_TYPE_DOUBLE);
  return v ? CLAMP (g_variant_get_double (v), 0.0, 1.0) : 0.0;
}

gint64
hz_learner_get_next_run (HzLearner *self)
{
  g_return_val_if_fail (HZ_IS_LEARNER (self), 0);
  g_autoptr(GVariant) v = cached (self, "NextRun", G_VARIANT_TYPE_INT64);
  return v ? g_variant_get_int64 (v) : 0;
}

gboolean
hz_learner_get_never_learn (HzLearner *self)
{
  g_return_val_if_fail (HZ_IS_LEARNER (self), FALSE);
  g_autoptr(GVariant) v = cached (self, "NeverLearn", G_VARIANT_TYPE_BOOLEAN);
  return v ? g_variant_get_boolean (v) : FALSE;
}

static void
set_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) ret = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result,
                                                           &error);
  HzLearner *self = user_data;

  if (ret == NULL)
    {
      g_dbus_error_strip_remote_error (error);
      g_signal_emit (self, signals[SIG_CALL_FAILED], 0, "NeverLearn", error->message);
      notify_all (self);  /* show the daemon's value again */
    }
  g_object_unref (self);
}

void
hz_learner_set_never_learn (HzLearner *self, gboolean never)
{
  g_return_if_fail (HZ_IS_LEARNER (self));
  if (self->proxy == NULL || hz_learner_get_never_learn (self) == !!never)
    return;
  g_dbus_connection_call (g_dbus_proxy_get_connection (self->proxy),
                          g_dbus_proxy_get_name_owner (self->proxy), HZ_LEARNER_OBJECT_PATH,
                          "org.freedesktop.DBus.Properties", "Set",
                          g_variant_new ("(ssv)", HZ_LEARNER_INTERFACE, "NeverLearn",
                                         g_variant_new_boolean (never)),
                          NULL, G_DBUS_CALL_FLAGS_NONE, -1, NULL, set_done,
                          g_object_ref (self));
}

void
hz_learner_hold (HzLearner *self)
{
  g_return_if_fail (HZ_IS_LEARNER (self));
  if (self->holds++ == 0 && self->proxy != NULL && !self->paused)
    {
      self->paused = TRUE;
      call_method (self, "Pause", NULL, NULL);
    }
}

void
hz_learner_release (HzLearner *self)
{
  g_return_if_fail (HZ_IS_LEARNER (self));
  g_return_if_fail (self->holds > 0);
  if (--self->holds == 0 && self->paused)
    {
      self->paused = FALSE;
      call_method (self, "Resume", NULL, NULL);
    }
}

void
hz_learner_learn_now (HzLearner *self)
{
  g_return_if_fail (HZ_IS_LEARNER (self));
  call_method (self, "LearnNow", NULL, NULL);
}

void
hz_learner_rollback (HzLearner *self,
                     void (*callback) (const char *, const GError *, gpointer), gpointer data)
{
  g_return_if_fail (HZ_IS_LEARNER (self));
  call_method (self, "Rollback", callback, data);
}

char *
hz_learner_describe (HzLearner *self)
{
  const char *state = hz_learner_get_state (self);
  gint64 next = hz_learner_get_next_run (self);
  g_autofree char *when = NULL;

  if (next > 0)
    {
      g_autoptr(GDateTime) dt = g_date_time_new_from_unix_local (next);
      if (dt != NULL)
        when = g_date_time_format (dt, "%H:%M");
    }
  if (g_strcmp0 (state, "running") == 0)
    return g_strdup_printf (_("Learning: %d %%"), (int) (hz_learner_get_progress (self) * 100 + 0.5));
  if (g_strcmp0 (state, "paused") == 0)
    return g_strdup (_("Learner paused"));
  if (g_strcmp0 (state, "disabled") == 0)
    return g_strdup (_("Learning is off"));
  if (when != NULL)
    return g_strdup_printf (_("Learner idle · next run %s"), when);
  return g_strdup (_("Learner idle"));
}

/* ------------------------------------------------------------------ GObject */

static void
hz_learner_get_property (GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
  HzLearner *self = HZ_LEARNER (object);

  switch (id)
    {
    case PROP_PRESENT: g_value_set_boolean (value, hz_learner_is_present (self)); break;
    case PROP_STATE: g_value_set_string (value, hz_learner_get_state (self)); break;
    case PROP_PROGRESS: g_value_set_double (value, hz_learner_get_progress (self)); break;
    case PROP_NEXT_RUN: g_value_set_int64 (value, hz_learner_get_next_run (self)); break;
    case PROP_NEVER_LEARN: g_value_set_boolean (value, hz_learner_get_never_learn (self)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, id, pspec);
    }
}

static void
hz_learner_dispose (GObject *object)
{
  HzLearner *self = HZ_LEARNER (object);

  g_clear_handle_id (&self->watch_id, g_bus_unwatch_name);
  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  if (self->proxy != NULL)
    {
      g_signal_handlers_disconnect_by_data (self->proxy, self);
      if (self->paused)
        g_dbus_proxy_call (self->proxy, "Resume", NULL, G_DBUS_CALL_FLAGS_NONE, -1, NULL, NULL, NULL);
    }
  self->paused = FALSE;
  g_clear_object (&self->proxy);
  G_OBJECT_CLASS (hz_learner_parent_class)->dispose (object);
}

static void
hz_learner_constructed (GObject *object)
{
  HzLearner *self = HZ_LEARNER (object);

  G_OBJECT_CLASS (hz_learner_parent_class)->constructed (object);
  self->watch_id = g_bus_watch_name (G_BUS_TYPE_SESSION, HZ_LEARNER_BUS_NAME,
                                     G_BUS_NAME_WATCHER_FLAGS_AUTO_START,
                                     on_name_appeared, on_name_vanished, self, NULL);
}

static void
hz_learner_class_init (HzLearnerClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->get_property = hz_learner_get_property;
  object_class->dispose = hz_learner_dispose;
  object_class->constructed = hz_learner_constructed;

  props[PROP_PRESENT] = g_param_spec_boolean ("present", NULL, NULL, FALSE,
                                              G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  props[PROP_STATE] = g_param_spec_string ("state", NULL, NULL, "",
                                           G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  props[PROP_PROGRESS] = g_param_spec_double ("progress", NULL, NULL, 0, 1, 0,
                                              G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  props[PROP_NEXT_RUN] = g_param_spec_int64 ("next-run", NULL, NULL, 0, G_MAXINT64, 0,
                                             G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  props[PROP_NEVER_LEARN] = g_param_spec_boolean ("never-learn", NULL, NULL, FALSE,
                                                  G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, props);

  signals[SIG_CALL_FAILED] =
    g_signal_new ("call-failed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_STRING, G_TYPE_STRING);
  signals[SIG_ACTIVE_ADAPTER_CHANGED] =
    g_signal_new ("active-adapter-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
  signals[SIG_SHARED_ADAPTER_CHANGED] =
    g_signal_new ("shared-adapter-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_STRING, G_TYPE_UINT64);
}

static void
hz_learner_init (HzLearner *self)
{
}
