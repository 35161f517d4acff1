#pragma once
#include <xf86drm.h>
#include <drm_fourcc.h>
