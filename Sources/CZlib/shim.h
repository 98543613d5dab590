#ifndef TERN_CZLIB_SHIM_H
#define TERN_CZLIB_SHIM_H
#include <zlib.h>

/// `inflateInit2` is a macro passing the library's version and the stream's size; Swift cannot
/// call macros.
static inline int tern_inflate_init_raw(z_stream *stream) {
    return inflateInit2(stream, -15);
}
#endif
