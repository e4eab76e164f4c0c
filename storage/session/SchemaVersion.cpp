#include "storage/session/SchemaVersion.h"
