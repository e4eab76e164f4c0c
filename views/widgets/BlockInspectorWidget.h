#pragma once
// The block inspector (right dock): the selected block's size, requested bytes, stream, segment
// and state, the events that allocated and freed it with the cause of each ("released by garbage
// collection"), and the stack of its allocation. Read-only, selectable text.
#include <QWidget>

#include "views/data/BlockInspectorData.h"

class QTextBrowser;

namespace allocscope::views {

class BlockInspectorWidget : public QWidget {
    Q_OBJECT
public:
    explicit BlockInspectorWidget(QWidget* parent = nullptr);

    void setData(BlockInspectorData data);
    void clear(const QString& hint = QString());  // nothing selected (with an optional hint)
    const BlockInspectorData& data() const { return data_; }
    QString plainText() const;  // what is shown, as text (tests, copy)
    QTextBrowser* browser() const { return browser_; }

signals:
    // The user clicked an event link ("go to event N").
    void eventRequested(qint64 event);

private:
    BlockInspectorData data_;
    QTextBrowser* browser_;
};

}  // namespace allocscope::views
