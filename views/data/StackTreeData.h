#pragma once
// What the Stacks tab draws: the live blocks' bytes by call stack, caller to callee (the tree and
// the icicle chart show the same nodes), at one point of a run or as the difference between two
// points. Filled by app/ from storage's StackTree.
#include <QString>
#include <QtGlobal>

#include <vector>

namespace allocscope::views {

struct StackTreeNode {
    enum class Kind : quint8 { Root, Frame, NoStack, InternalOnly };
    Kind kind = Kind::Frame;
    QString label;     // "name (file.py:line)" (the file without its folder), "no stack recorded", "internal frames only", "all live blocks"
    QString toolTip;   // "name\nfull/path/file.py, line N", or why there is no stack
    // [0] before (or the only side), [1] after (diff only).
    qint64 bytes[2] = {0, 0};
    qint64 blocks[2] = {0, 0};
    quint64 largestBlock = 0;  // the largest block under the node on the shown side (0: none)
    std::vector<StackTreeNode> children;  // largest first

    qint64 deltaBytes() const { return bytes[1] - bytes[0]; }
    qint64 deltaBlocks() const { return blocks[1] - blocks[0]; }
};

struct StackTreeData {
    bool valid = false;
    bool diff = false;          // two sides: before = the other point, after = this one
    QString description;        // "run 1 at event 4121" / "run 2 at op 300 − run 1 at op 300"
    QString beforeLabel;        // diff: what the "before" column is ("event 100", "run 1")
    QString afterLabel;
    StackTreeNode root;
};

}  // namespace allocscope::views

namespace allocscope::views {

// What the Stacks tab's toolbar asks for.
struct StacksChoice {
    enum class At : quint8 { Scrubber, Peak };          // the scrubber's event, or the run's allocated peak
    enum class Diff : quint8 { Off, Event, Run };       // compare with another event / another run at the same op
    At at = At::Scrubber;
    Diff diff = Diff::Off;
    qint64 otherEvent = 0;
    int otherRun = 0;
    bool hideInternals = false;
};

}  // namespace allocscope::views
