#include "app/gui/StackViewAdapters.h"

#include <QObject>
#include <QStringList>

#include <algorithm>
#include <map>

#include "app/gui/QtText.h"
#include "app/gui/ViewDataAdapters.h"
#include "storage/import/FrameLine.h"
#include "storage/session/UserFrames.h"

namespace allocscope::app {
namespace {

QString frameText(const alloc::Frame& f, bool shortFile = false) {
    QString file = qs(f.filename);
    if (shortFile) file = file.section(QLatin1Char('/'), -1);
    return QStringLiteral("%1 (%2:%3)").arg(qs(f.name), file, qs(storage::FrameLine::text(f.line)));
}

views::StackTreeNode convert(const storage::StackNode& node, bool root, bool diff, const QString& noStackWhy) {
    views::StackTreeNode out;
    out.kind = root ? views::StackTreeNode::Kind::Root
               : node.noStack ? views::StackTreeNode::Kind::NoStack
               : node.internalOnly ? views::StackTreeNode::Kind::InternalOnly
                                   : views::StackTreeNode::Kind::Frame;
    // The file's own name in the label (a tree is narrow); the whole path is in the tooltip.
    out.label = out.kind == views::StackTreeNode::Kind::Frame ? frameText(node.frame, true) : qs(node.label(root));
    switch (out.kind) {
        case views::StackTreeNode::Kind::Root: out.toolTip = QObject::tr("Every block live at the event"); break;
        case views::StackTreeNode::Kind::NoStack: out.toolTip = noStackWhy; break;
        case views::StackTreeNode::Kind::InternalOnly:
            out.toolTip = QObject::tr("Blocks whose every frame is PyTorch's or Python's own (hidden by \"Hide PyTorch internals\")");
            break;
        case views::StackTreeNode::Kind::Frame:
            out.toolTip = QObject::tr("%1\n%2, line %3").arg(qs(node.frame.name), qs(node.frame.filename), qs(storage::FrameLine::text(node.frame.line)));
            break;
    }
    for (int side = 0; side < 2; ++side) {
        out.bytes[side] = node.bytes[side];
        out.blocks[side] = node.blocks[side];
    }
    const int shown = diff && node.largestBlockSize[1] > 0 ? 1 : 0;
    out.largestBlock = diff && shown == 0 ? 0 : node.largestBlock[shown];  // a diff selects only blocks live here
    out.children.reserve(node.children.size());
    for (const storage::StackNode& child : node.children) out.children.push_back(convert(child, false, diff, noStackWhy));
    if (diff) {
        std::stable_sort(out.children.begin(), out.children.end(), [](const views::StackTreeNode& a, const views::StackTreeNode& b) {
            const qint64 da = a.deltaBytes() < 0 ? -a.deltaBytes() : a.deltaBytes();
            const qint64 db = b.deltaBytes() < 0 ? -b.deltaBytes() : b.deltaBytes();
            return da > db;
        });
    }
    return out;
}

}  // namespace

QString noStackReason(const std::string& sourceKind) {
    if (sourceKind == "csv") return QObject::tr("An RMM CSV log records sizes and addresses only: it has no call stacks.");
    if (sourceKind == "snapshot") {
        return QObject::tr("The snapshot has no frames for these blocks: it was recorded without stacks "
                           "(torch.cuda.memory._record_memory_history with stacks off), or they were allocated before recording started.");
    }
    return QObject::tr("The program that recorded this run gave no stack for these blocks.");
}

views::StackTreeData toStackTreeData(const storage::StackNode& root, bool diff, const QString& noStackWhy) {
    views::StackTreeData data;
    data.valid = true;
    data.diff = diff;
    data.root = convert(root, true, diff, noStackWhy);
    return data;
}

views::LiveTensorsData toLiveTensorsData(const std::vector<storage::LiveBlock>& blocks, const storage::StackTree::StackOf& stackOf,
                                         int run, std::uint64_t event, const QString& noStackWhy) {
    views::LiveTensorsData data;
    data.valid = true;
    data.run = run;
    data.event = static_cast<qint64>(event);
    data.rows.reserve(blocks.size());
    std::map<std::uint32_t, std::pair<QString, QString>> frames;  // stack id -> (top user frame, whole stack)
    for (const storage::LiveBlock& b : blocks) {
        views::LiveTensorRow row;
        row.address = b.address;
        row.size = b.size;
        row.requested = b.requestedSize;
        row.stream = b.stream;
        row.segment = b.segment;
        row.pool = poolLabel(b.pool);
        row.pendingFree = b.state == alloc::BlockState::ActivePendingFree;
        if (b.allocEvent && !b.restored) {
            row.allocEvent = static_cast<qint64>(*b.allocEvent);
            row.age = static_cast<qint64>(event) - row.allocEvent;
        }
        auto it = frames.find(b.stackId);
        if (it == frames.end()) {
            const alloc::Stack stack = b.stackId == 0 ? alloc::Stack{} : stackOf(b.stackId);
            std::pair<QString, QString> text;
            if (!stack.empty()) {
                text.first = frameText(*storage::UserFrames::top(stack));
                QStringList lines;
                for (const alloc::Frame& f : stack) lines << frameText(f);
                text.second = lines.join(QLatin1Char('\n'));
            }
            it = frames.emplace(b.stackId, std::move(text)).first;
        }
        row.hasStack = !it->second.first.isEmpty();
        row.topFrame = row.hasStack ? it->second.first : QObject::tr("no stack recorded");
        row.stackText = it->second.second;
        data.rows.push_back(std::move(row));
    }
    data.noStackWhy = noStackWhy;
    return data;
}

}  // namespace allocscope::app
