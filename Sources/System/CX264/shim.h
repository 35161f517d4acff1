#pragma once
#include <stdint.h>
#include <x264.h>
