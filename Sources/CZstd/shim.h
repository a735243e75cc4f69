#ifndef KAKAPO_CZSTD_SHIM_H
#define KAKAPO_CZSTD_SHIM_H

// Zstandard (Debian's libzstd-dev): `Content-Encoding: zstd` bodies, decoded and written again on replay.
#include <zstd.h>

#endif
