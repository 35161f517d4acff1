#include "CShareGLib.h"

gulong CShareGLib_signal_connect(gpointer instance, const char *signal, GCallback handler, gpointer data) {
    return g_signal_connect_data(instance, signal, handler, data, NULL, (GConnectFlags)0);
}

void CShareNice_set_stun_server(NiceAgent *agent, const char *host, unsigned port) {
    g_object_set(G_OBJECT(agent), "stun-server", host, "stun-server-port", port, NULL);
}

void CShareNice_set_controlling(NiceAgent *agent, gboolean controlling) {
    g_object_set(G_OBJECT(agent), "controlling-mode", controlling, NULL);
}

void CShareNice_set_ice_tcp(NiceAgent *agent, gboolean enabled) {
    g_object_set(G_OBJECT(agent), "ice-tcp", enabled, NULL);
}

void CShareNice_set_upnp(NiceAgent *agent, gboolean enabled) { g_object_set(G_OBJECT(agent), "upnp", enabled, NULL); }

void CShareNice_set_force_relay(NiceAgent *agent, gboolean enabled) { g_object_set(G_OBJECT(agent), "force-relay", enabled, NULL); }

void CShareNice_set_check_timing(NiceAgent *agent, unsigned initial_ms, unsigned retransmissions, unsigned reliable_ms) { g_object_set(G_OBJECT(agent), "stun-initial-timeout", initial_ms, "stun-max-retransmissions", retransmissions, "stun-reliable-timeout", reliable_ms, NULL); }

void CShareNice_set_keepalive_conncheck(NiceAgent *agent, gboolean enabled) { g_object_set(G_OBJECT(agent), "keepalive-conncheck", enabled, NULL); }

void CShareGLib_object_unref(gpointer object) { g_object_unref(object); }
