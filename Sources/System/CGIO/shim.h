#pragma once
#include <gio/gio.h>
#include <gio/gunixfdlist.h>
