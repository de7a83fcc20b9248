/* learner/tray.h — the learner's tray icon: a StatusNotifierItem with a dbusmenu menu.
 *
 * Protocols (both over GDBus on the session bus, no toolkit needed):
 *   - StatusNotifierItem (freedesktop.org draft spec, as implemented by KDE, the GNOME
 *     AppIndicator extension, waybar, ...): interface org.kde.StatusNotifierItem at
 *     /StatusNotifierItem, registered with org.kde.StatusNotifierWatcher
 *     RegisterStatusNotifierItem(bus name). The watcher may come and go (a shell restart,
 *     GNOME without the extension): the tray watches its name and registers whenever it
 *     appears; with no watcher there is simply no icon.
 *   - com.canonical.dbusmenu (libdbusmenu's protocol, version 3) at /MenuBar: a flat menu
 *     "progress" (insensitive label), separator, "Pause learning"/"Resume learning",
 *     "Open Hanzo", separator, "Quit".
 *
 * Thread safety: create, update and free on the thread whose main context is the thread
 * default at hz_tray_new (the daemon's main thread); the action callback runs there.
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef enum {
  HZ_TRAY_ACTION_PAUSE,
  HZ_TRAY_ACTION_RESUME,
  HZ_TRAY_ACTION_OPEN,    /* the icon was activated or "Open Hanzo" chosen */
  HZ_TRAY_ACTION_QUIT,
} HzTrayAction;

typedef void (*HzTrayActionFunc) (HzTrayAction action, gpointer user_data);

typedef struct _HzTray HzTray;

/** Export the item and its menu on `conn` (the daemon's session bus connection; its unique
 *  name is what gets registered) and start watching for a StatusNotifierWatcher.
 *  `icon_name` is a themed icon name. Returns NULL with a G_IO_ERROR / G_DBUS_ERROR when
 *  the objects cannot be exported (e.g. the paths are taken on this connection). */
HzTray  *hz_tray_new (GDBusConnection *conn, const char *icon_name, HzTrayActionFunc func,
                      gpointer user_data, GError **error);
/** Unexport everything and stop watching. NULL is ignored. */
void     hz_tray_free (HzTray *tray);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzTray, hz_tray_free)

/** Show the learner's state: `state` is the daemon's State ("idle", "waiting", "running",
 *  "paused", "disabled"), `progress` 0..1 of a running job. Updates the menu's first item
 *  ("Learning: 42 %" etc.), the Pause/Resume item, the tooltip and the item's Status
 *  ("Active" while running, else "Passive"), emitting the protocol's change signals only
 *  when something changed. */
void     hz_tray_update (HzTray *tray, const char *state, double progress);

/** TRUE once a watcher acknowledged RegisterStatusNotifierItem (for tests and logs). */
gboolean hz_tray_is_registered (HzTray *tray);

G_END_DECLS
