// The hand-off hooks are inline in the header; a C target needs one source file.
#include "CShareSanitizer.h"
