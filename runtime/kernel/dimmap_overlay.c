// SPDX-License-Identifier: GPL-2.0
/*
 * dimmap_overlay.c - dimmapfs, the DI-MMAP file-system overlay:
 *
 *   mount -t dimmapfs -o source=DIR[,buffer=N] none MNT      (or: mount -t dimmapfs DIR MNT)
 *
 * shows every regular file and subdirectory of DIR under MNT. read and write pass to the
 * file in DIR; mmap of a file goes through buffer N with the DI-MMAP policy: on the first
 * open the file gets a link (as dimmapctl link gives a device, but without a /dev node), so
 * its pages live in the buffer and not in the Linux page cache. msync/fsync write back;
 * unmounting (refused by the VFS while a file is open or mapped) writes every page back.
 *
 * Coherence: read writes the range's dirty buffer pages back first, write drops the range
 * from the buffer before and after it writes, so read/write and mappings see each other's
 * data. Files whose size is not a multiple of the page size (the buffer caches whole pages)
 * are mapped through DIR's own file system instead (dimmap_overlay_file.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/fs_context.h>
#include <linux/fs_parser.h>
#include <linux/file.h>
#include <linux/module.h>
#include <linux/namei.h>
#include <linux/slab.h>
#include <linux/statfs.h>

#include "dimmap_compat.h"
#include "dimmap_overlay.h"

static const struct inode_operations dmfs_dir_iops;
static const struct file_operations dmfs_dir_fops;

/* Size, owner, mode and times from the backing inode. */
void dmfs_copy_attr(struct inode *inode, const struct inode *from)
{
	inode->i_mode = from->i_mode;
	inode->i_uid = from->i_uid;
	inode->i_gid = from->i_gid;
	dm_inode_copy_times(inode, from);
	i_size_write(inode, i_size_read(from));
}

static struct inode *dmfs_make_inode(struct super_block *sb, const struct path *backing)
{
	struct inode *from = d_inode(backing->dentry);
	struct dmfs_node *node;
	struct inode *inode;

	if (!S_ISREG(from->i_mode) && !S_ISDIR(from->i_mode))
		return ERR_PTR(-ENOENT);	/* only files and directories are shown */
	node = kzalloc(sizeof(*node), GFP_KERNEL);
	inode = node ? new_inode(sb) : NULL;
	if (!inode) {
		kfree(node);
		return ERR_PTR(-ENOMEM);
	}
	node->backing = *backing;
	path_get(&node->backing);
	mutex_init(&node->lock);
	inode->i_private = node;
	inode->i_ino = get_next_ino();
	dmfs_copy_attr(inode, from);
	if (S_ISDIR(from->i_mode)) {
		inode->i_op = &dmfs_dir_iops;
		inode->i_fop = &dmfs_dir_fops;
		set_nlink(inode, 2);
	} else {
		inode->i_op = &dmfs_file_iops;
		inode->i_fop = &dmfs_file_fops;
	}
	return inode;
}

/* ---- directories ---- */

static struct dentry *dmfs_lookup(struct inode *dir, struct dentry *dentry, unsigned int flags)
{
	struct dmfs_node *node = dmfs_node(dir);
	struct inode *inode = NULL;
	struct path path = { .mnt = node->backing.mnt };

	path.dentry = lookup_one_len_unlocked(dentry->d_name.name, node->backing.dentry,
					      dentry->d_name.len);
	if (IS_ERR(path.dentry))
		return ERR_CAST(path.dentry);
	if (d_really_is_positive(path.dentry)) {
		inode = dmfs_make_inode(dir->i_sb, &path);
		if (inode == ERR_PTR(-ENOENT))
			inode = NULL;	/* not a file or directory: not shown */
	}
	dput(path.dentry);
	if (IS_ERR(inode))
		return ERR_CAST(inode);
	return d_splice_alias(inode, dentry);	/* NULL inode: a negative dentry */
}

static int dmfs_dir_open(struct inode *inode, struct file *file)
{
	struct file *real = dentry_open(&dmfs_node(inode)->backing, O_RDONLY | O_DIRECTORY,
					current_cred());

	if (IS_ERR(real))
		return PTR_ERR(real);
	file->private_data = real;
	return 0;
}

static int dmfs_dir_release(struct inode *inode, struct file *file)
{
	fput(file->private_data);
	return 0;
}

/* Reads DIR's entries and passes on the files and directories from entry `skip` on. */
struct dmfs_readdir {
	struct dir_context ctx;
	struct dir_context *caller;
	loff_t index;		/* entries passed on or skipped so far, after . and .. */
	loff_t skip;
	bool full;
};

static bool dmfs_filldir(struct dir_context *ctx, const char *name, int len, loff_t offset,
			 u64 ino, unsigned int type)
{
	struct dmfs_readdir *rd = container_of(ctx, struct dmfs_readdir, ctx);

	if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
		return true;
	if (type != DT_REG && type != DT_DIR && type != DT_UNKNOWN)
		return true;
	if (rd->index++ < rd->skip)
		return true;
	if (!dir_emit(rd->caller, name, len, ino, type)) {
		rd->full = true;
		return false;
	}
	rd->caller->pos++;
	return true;
}

/*
 * Positions: 0 and 1 are . and .., 2 + i the i-th file or directory of DIR. Each call
 * reads DIR from its start and skips what was passed on before, so a position stays
 * valid however DIR's own offsets work.
 */
static int dmfs_iterate(struct file *file, struct dir_context *ctx)
{
	struct file *real = file->private_data;
	struct dmfs_readdir rd = { .ctx.actor = dmfs_filldir, .caller = ctx };
	loff_t err;

	if (!dir_emit_dots(file, ctx))
		return 0;
	rd.skip = ctx->pos - 2;
	err = vfs_llseek(real, 0, SEEK_SET);
	return err < 0 ? err : iterate_dir(real, &rd.ctx);
}

static const struct file_operations dmfs_dir_fops = {
	.owner = THIS_MODULE,
	.open = dmfs_dir_open,
	.release = dmfs_dir_release,
	.iterate_shared = dmfs_iterate,
	.read = generic_read_dir,
	.llseek = default_llseek,
};

static const struct inode_operations dmfs_dir_iops = {
	.lookup = dmfs_lookup,
};

/* ---- the super block ---- */

/* A file's pages are written back when its inode goes: at unmount, or when pruned. */
static void dmfs_evict_inode(struct inode *inode)
{
	struct dmfs_node *node = dmfs_node(inode);

	truncate_inode_pages_final(&inode->i_data);
	clear_inode(inode);
	if (!node)
		return;
	if (node->link)
		dm_link_drop_owned(node->link);
	path_put(&node->backing);
	kfree(node);
}

static int dmfs_statfs(struct dentry *dentry, struct kstatfs *buf)
{
	struct dmfs_node *root = dmfs_node(d_inode(dentry->d_sb->s_root));
	int err = vfs_statfs(&root->backing, buf);

	buf->f_type = DMFS_MAGIC;
	return err;
}

static const struct super_operations dmfs_super_ops = {
	.statfs = dmfs_statfs,
	.evict_inode = dmfs_evict_inode,
};

/* Negative dentries are not kept: a file created in DIR later shows up at once. */
static int dmfs_d_delete(const struct dentry *dentry)
{
	return d_really_is_negative(dentry);
}

static const struct dentry_operations dmfs_dentry_ops = {
	.d_delete = dmfs_d_delete,
};

struct dmfs_options {
	char *source;
	unsigned int buffer;
};

enum { DMFS_OPT_SOURCE, DMFS_OPT_BUFFER };

static const struct fs_parameter_spec dmfs_params[] = {
	fsparam_string("source", DMFS_OPT_SOURCE),
	fsparam_u32("buffer", DMFS_OPT_BUFFER),
	{}
};

static int dmfs_parse_param(struct fs_context *fc, struct fs_parameter *param)
{
	struct dmfs_options *opt = fc->fs_private;
	struct fs_parse_result result;
	int opt_id = fs_parse(fc, dmfs_params, param, &result);

	if (opt_id < 0)
		return opt_id;
	if (opt_id == DMFS_OPT_BUFFER) {
		opt->buffer = result.uint_32;
		return 0;
	}
	/* source= in the options, or the device name: the last one given counts */
	kfree(opt->source);
	opt->source = param->string;
	param->string = NULL;
	return 0;
}

static int dmfs_fill_super(struct super_block *sb, struct fs_context *fc)
{
	struct dmfs_options *opt = fc->fs_private;
	struct dmfs_mount *m;
	struct inode *root;
	struct path path;
	int err;

	if (!opt->source || !strcmp(opt->source, "none"))
		return invalfc(fc, "give the directory to show: -o source=DIR");
	if (opt->buffer >= dm_nr_buffers)
		return invalfc(fc, "buffer=%u: the module has %u buffer(s)", opt->buffer,
			       dm_nr_buffers);
	err = kern_path(opt->source, LOOKUP_FOLLOW | LOOKUP_DIRECTORY, &path);
	if (err)
		return invalfc(fc, "source=%s: not a directory (%d)", opt->source, err);
	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m) {
		path_put(&path);
		return -ENOMEM;
	}
	m->buf = dm_buffers[opt->buffer];
	sb->s_fs_info = m;
	sb->s_magic = DMFS_MAGIC;
	sb->s_op = &dmfs_super_ops;
	sb->s_d_op = &dmfs_dentry_ops;
	sb->s_maxbytes = MAX_LFS_FILESIZE;
	sb->s_time_gran = 1;
	root = dmfs_make_inode(sb, &path);
	path_put(&path);
	if (IS_ERR(root))
		return PTR_ERR(root);
	sb->s_root = d_make_root(root);
	if (!sb->s_root)
		return -ENOMEM;
	pr_info("dimmapfs: %s mounted through buffer %u\n", opt->source, opt->buffer);
	return 0;
}

static int dmfs_get_tree(struct fs_context *fc)
{
	return get_tree_nodev(fc, dmfs_fill_super);
}

static void dmfs_free_fc(struct fs_context *fc)
{
	struct dmfs_options *opt = fc->fs_private;

	if (opt)
		kfree(opt->source);
	kfree(opt);
}

static const struct fs_context_operations dmfs_context_ops = {
	.parse_param = dmfs_parse_param,
	.get_tree = dmfs_get_tree,
	.free = dmfs_free_fc,
};

static int dmfs_init_fs_context(struct fs_context *fc)
{
	fc->fs_private = kzalloc(sizeof(struct dmfs_options), GFP_KERNEL);
	if (!fc->fs_private)
		return -ENOMEM;
	fc->ops = &dmfs_context_ops;
	return 0;
}

/* Unmount: evicting the inodes writes every file's pages back and frees them. */
static void dmfs_kill_sb(struct super_block *sb)
{
	kill_anon_super(sb);
	kfree(sb->s_fs_info);
}

static struct file_system_type dmfs_type = {
	.owner = THIS_MODULE,
	.name = "dimmapfs",
	.init_fs_context = dmfs_init_fs_context,
	.parameters = dmfs_params,
	.kill_sb = dmfs_kill_sb,
};

int dm_overlay_register(void)
{
	return register_filesystem(&dmfs_type);
}

void dm_overlay_unregister(void)
{
	unregister_filesystem(&dmfs_type);
}
