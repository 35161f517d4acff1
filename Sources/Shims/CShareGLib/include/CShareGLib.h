// Thin shims over GLib/GObject/libnice entry points that are macros or variadic.
#pragma once
#include <glib.h>
#include <glib-object.h>
#include <gio/gio.h>
#include <agent.h>

// g_signal_connect is a macro over g_signal_connect_data.
gulong CShareGLib_signal_connect(gpointer instance, const char *signal, GCallback handler, gpointer data);
// g_object_set is variadic.
void CShareNice_set_stun_server(NiceAgent *agent, const char *host, unsigned port);
void CShareNice_set_controlling(NiceAgent *agent, gboolean controlling);
void CShareNice_set_ice_tcp(NiceAgent *agent, gboolean enabled);
// G_OBJECT and friends are macros.
void CShareGLib_object_unref(gpointer object);
