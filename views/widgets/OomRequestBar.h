#pragma once
// The OOM tab's picture of the failure. On top, the memory under the limit at that moment:
// allocated, cached free, and the room left before the limit (the limit a line, an interval a
// shaded band). Under it, on a scale of their own (a 256 MiB request is a sliver of 80 GiB), the
// three things the allocator could have served the request from side by side: the request, the
// largest cached free block, and the room under the limit. A request longer than both others is
// the OOM; one shorter than the cached free bytes but longer than the largest block is
// fragmentation.
#include <QWidget>

#include "views/data/OomAnswerData.h"

namespace allocscope::views {

class OomRequestBar : public QWidget {
    Q_OBJECT
public:
    enum class Row { Memory, Request, LargestFree, Room };

    explicit OomRequestBar(QWidget* parent = nullptr);

    void setAnswer(const OomAnswerData& answer);
    // The part of `row` that is painted with its colour(s) at the current size (tests sample it;
    // an empty rect when the row's bytes are not known or zero).
    QRect barRect(Row row) const;
    // The room under the limit (its low end) at the failure: limit - reserved, 0 when over it;
    // -1 when either is not known.
    qint64 room() const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    struct Geometry {
        QRect memory;       // the whole top track (0 .. scale)
        double memoryScale = 0;
        int labelWidth = 0;
        QRect rows[3];      // the tracks of Request, LargestFree, Room
        double rowScale = 0;
    };
    Geometry geometry() const;

    OomAnswerData answer_;
};

}  // namespace allocscope::views
