#pragma once
#include <gio/gio.h>
