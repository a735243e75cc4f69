#ifndef KAKAPO_CBROTLI_SHIM_H
#define KAKAPO_CBROTLI_SHIM_H

// Google's brotli (Debian's libbrotli-dev): the decoder for `Content-Encoding: br` bodies, and the encoder
// that writes them again on replay.
#include <brotli/decode.h>
#include <brotli/encode.h>

#endif
