#ifndef TERN_CCRYPTO_SHIM_H
#define TERN_CCRYPTO_SHIM_H
/// The system's libcrypto (OpenSSL 3), for its SHA-2 digests alone: Core Data's version hashes
/// and Tern's content digests. Found with pkg-config like sqlite3, libuv and zlib.
#include <openssl/evp.h>
#endif
