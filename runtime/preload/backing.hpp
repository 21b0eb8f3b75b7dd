// backing.hpp - the mappings behind big allocations: anonymous memory, an unlinked file
// mapped by Linux, or an unlinked file mapped by a DI-MMAP buffer.
//
// Files are preallocated (fallocate) when they are created, so a full filesystem shows up
// as a failed allocation (malloc returns NULL) rather than as SIGBUS on some later store.
// Freeing a dimmap block discards its pages first (dimmap_discard): the data is dead, so the
// unmap has nothing to write back.
#pragma once

#include <dimmap/dimmap.h>

#include <cstddef>

#include "block_table.hpp"

namespace dimmap::preload {

// A new file in dir with no name (O_TMPFILE, or created and unlinked at once).
// Returns the descriptor or -errno.
int make_unnamed_file(const char* dir);

// Maps a block of at least `size` bytes whose user address is aligned to `align` (a power
// of two). kind is anonymous, file or dimmap; dir is used by file and dimmap, inst by dimmap.
// Returns 0 or an errno with a message naming the directory in err.
int map_block(BlockKind kind, const char* dir, dimmap_instance* inst, size_t size, size_t align, Block* out,
              char* err, size_t err_len);

// Unmaps a block. Returns 0 or an errno with a message in err.
int unmap_block(const Block& b, char* err, size_t err_len);

// In a forked child: libdimmap does not let dimmap mappings into children (MADV_DONTFORK),
// so the block's address range is empty here. Reserve it inaccessible (PROT_NONE), so the
// child cannot get the same addresses for a new allocation while the old block is still in
// the table; stray accesses fault as they would have anyway.
void make_inherited_placeholder(Block& b);

}  // namespace dimmap::preload
