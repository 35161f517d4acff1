#!/bin/sh
# git-commit.sh PACKAGE OUT: writes OUT/GitCommit.swift, the commit PACKAGE's git checkout is at
# and whether tracked files differ from it, or `hash: nil` when PACKAGE is not the top of a git
# checkout (a tarball, or one unpacked inside another repository) or git is missing. The file is
# only replaced when its text changes, so a build at the same commit compiles nothing again.
# Run by the GitCommit build plugin before each build; tests run it on folders of their own.
package=$1 out=$2
git() { /usr/bin/git -c safe.directory='*' -C "$package" "$@"; }
hash=nil modified=false
if [ -x /usr/bin/git ] && top=$(git rev-parse --show-toplevel 2>/dev/null) && [ "$top" -ef "$package" ] \
    && commit=$(git rev-parse --verify -q HEAD); then
    hash="\"$commit\""
    [ -z "$(git --no-optional-locks status --porcelain --untracked-files=no 2>/dev/null)" ] || modified=true
fi
mkdir -p "$out" || exit 1
printf '%s\n' \
    '// Made by the GitCommit build plugin (Plugins/GitCommit) before each build; not kept in git.' \
    '/// The commit this binary was built from, nil when its source was not a git checkout.' \
    'enum GitCommit {' \
    "    static let hash: String? = $hash" \
    '    /// Tracked files differed from the commit.' \
    "    static let modified = $modified" \
    '}' > "$out/GitCommit.swift.new" || exit 1
if cmp -s "$out/GitCommit.swift.new" "$out/GitCommit.swift"; then
    rm -f "$out/GitCommit.swift.new"
else
    mv -f "$out/GitCommit.swift.new" "$out/GitCommit.swift"
fi
