#pragma once
// A container for a widget that scrolls inside itself (the config editor's option form): in a
// layout it asks only for its minimum height and takes whatever height is left (give it a
// stretch), instead of the height-for-width answer of its contents, which in a layout that has
// height-for-width items is treated as both its minimum and its preferred height. Without it, a
// scroll area around the left panel sized the panel to the whole form and pushed the controls
// under it below the fold at 1280x720.
#include <QWidget>

namespace allocscope::views {

// No Q_OBJECT: no signals, slots or strings of its own.
class ElasticHeightBox : public QWidget {
public:
    using QWidget::QWidget;

    bool hasHeightForWidth() const override;
    QSize sizeHint() const override;
};

}  // namespace allocscope::views
