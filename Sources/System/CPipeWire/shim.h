#pragma once
#include <pipewire/pipewire.h>
#include <spa/param/video/format-utils.h>
#include <spa/param/video/raw.h>
#include <spa/debug/types.h>
#include <spa/buffer/meta.h>
