// FormatError is header-only; this file keeps the target non-empty until readers land.
#include "storage/formats/FormatError.h"
