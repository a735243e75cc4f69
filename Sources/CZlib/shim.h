#ifndef KAKAPO_CZLIB_SHIM_H
#define KAKAPO_CZLIB_SHIM_H

#include <zlib.h>

// inflateInit2 and deflateInit2 are macros, which Swift cannot call.

static inline int kakapo_inflate_init(z_streamp stream, int windowBits) {
    return inflateInit2(stream, windowBits);
}

static inline int kakapo_deflate_init(z_streamp stream, int level, int windowBits) {
    return deflateInit2(stream, level, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY);
}

#endif
