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
// g_object_set is variadic: libnice's UPnP mapping is of no use on a call and only slows gathering.
void CShareNice_set_upnp(NiceAgent *agent, gboolean enabled);
// g_object_set is variadic: relay-only ("force-relay") keeps host and reflexive candidates out of pairs.
void CShareNice_set_force_relay(NiceAgent *agent, gboolean enabled);
// g_object_set is variadic: connectivity-check timing (first retransmission ms, retransmissions, TCP ms).
void CShareNice_set_check_timing(NiceAgent *agent, unsigned initial_ms, unsigned retransmissions, unsigned reliable_ms);
// "keepalive-conncheck": connectivity checks (not indications) on the selected pair, which fail
// the component when they go unanswered.
void CShareNice_set_keepalive_conncheck(NiceAgent *agent, gboolean enabled);
// G_OBJECT and friends are macros.
void CShareGLib_object_unref(gpointer object);
