#pragma once
#include <agent.h>
#include <gio/gio.h>
