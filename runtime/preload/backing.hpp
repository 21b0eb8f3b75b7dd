// backing.hpp - the mappings behind big allocations: anonymous memory, an unlinked file
// mapped by Linux, or an unlinked file mapped by a DI-MMAP buffer.
//
// Files are preallocated (fallocate) when they are created, so a full filesystem shows up
// as a failed allocation (malloc returns NULL) rather than as SIGBUS on some later store.
//
// dimmap blocks keep a name (DIR/.dimmap-run-PID-XXXXXX) until they are freed. Workaround:
// the uffd engine drops dirty pages of unlinked files when it evicts them instead of writing
// them back, which loses data of a live mapping. While the file has a name, evictions write
// back; free() unlinks first, so the final unmap skips the useless writeback. The preload
// unlinks what is left at exit, and dimmap-run sweeps files of processes that died
// (sweep_orphaned_files). Remove once the engine writes back unlinked files' dirty pages.
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

// Unmaps a block (for a dimmap block, unlinks its file first). Returns 0 or an errno with a
// message in err.
int unmap_block(const Block& b, const char* dir, char* err, size_t err_len);

// Unlinks a dimmap block's named file, if it has one (at exit: the data is no longer needed).
void unlink_block_file(const Block& b, const char* dir);

// In a forked child: libdimmap does not let dimmap mappings into children (MADV_DONTFORK),
// so the block's address range is empty here. Reserve it inaccessible (PROT_NONE), so the
// child cannot get the same addresses for a new allocation while the old block is still in
// the table; stray accesses fault as they would have anyway.
void make_inherited_placeholder(Block& b);

// dimmap-run, after the command: removes DIR/.dimmap-run-PID-* files of processes that no
// longer exist (killed before they could unlink them). Returns how many it removed.
int sweep_orphaned_files(const char* dir);

}  // namespace dimmap::preload
