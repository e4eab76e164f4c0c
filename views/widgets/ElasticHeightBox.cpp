#include "views/widgets/ElasticHeightBox.h"

namespace allocscope::views {

bool ElasticHeightBox::hasHeightForWidth() const { return false; }

QSize ElasticHeightBox::sizeHint() const {
    // Full width, least height: the contents scroll when they get less than they would like.
    const QSize natural = QWidget::sizeHint();
    return {natural.width(), minimumSizeHint().height()};
}

}  // namespace allocscope::views
