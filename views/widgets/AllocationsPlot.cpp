#include "views/widgets/AllocationsPlot.h"

#include <QHash>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <array>
#include <cmath>

#include "views/util/Formatting.h"
#include "views/util/NiceTicks.h"

namespace allocscope::views {
namespace {

constexpr int kLeftMargin = 72;
constexpr int kBottomMargin = 22;
constexpr int kTopMargin = 6;
constexpr int kRightMargin = 8;
constexpr double kMinEvents = 8.0;

// Distinct mid-saturation hues that read on light and dark backgrounds; a site keeps its colour
// across runs and zooms because it is picked by a hash of the site's label.
constexpr QRgb kSiteColours[] = {
    0xff4e79a7, 0xfff28e2b, 0xffe15759, 0xff76b7b2, 0xff59a14f, 0xffedc948,
    0xffb07aa1, 0xffff9da7, 0xff9c755f, 0xff7b6fd6, 0xffa0cbe8, 0xff8f8f2e,
};
constexpr int kSiteColourCount = static_cast<int>(sizeof kSiteColours / sizeof kSiteColours[0]);

}  // namespace

AllocationsPlot::AllocationsPlot(QWidget* parent) : QWidget(parent), palette_(ThemePalette::forPalette(palette())) {
    setFocusPolicy(Qt::StrongFocus);
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent);
}

void AllocationsPlot::setData(AllocationsData input) {
    data_ = std::move(input);
    assignColours();
    rebuildDrawn();
    x0_ = 0;
    x1_ = std::max<double>(1.0, static_cast<double>(data_.eventCount));
    autoBytes_ = true;
    fitBytes();
    invalidate();
    emit windowChanged();
}

void AllocationsPlot::setDetail(int count) {
    detail_ = std::max(1, count);
    rebuildDrawn();
    fitBytes();
    invalidate();
}

void AllocationsPlot::rebuildDrawn() {
    const int n = std::min<int>(detail_, static_cast<int>(data_.bands.size()));
    drawn_.resize(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) drawn_[static_cast<std::size_t>(i)] = i;
    // Stacked in allocation order: the earliest allocation lies lowest.
    std::sort(drawn_.begin(), drawn_.end(), [this](int a, int b) {
        return data_.bands[static_cast<std::size_t>(a)].allocEvent < data_.bands[static_cast<std::size_t>(b)].allocEvent;
    });
    allocOf_.clear();
    freeOf_.clear();
    sizeOf_.clear();
    colourOf_.clear();
    std::vector<quint64> siteBytes(data_.sites.size(), 0);
    for (const int i : drawn_) {
        const AllocationBandView& b = data_.bands[static_cast<std::size_t>(i)];
        allocOf_.push_back(b.allocEvent);
        freeOf_.push_back(b.freeEvent);
        sizeOf_.push_back(static_cast<qint64>(b.size));
        QColor colour = siteColor(b.site);
        if (highlight_.active() && !highlight_.matches(b.address, b.size, b.stackId)) {
            // Faded towards the background, so the matches stand out in place.
            const QColor back = palette_.background;
            colour = QColor((colour.red() + 3 * back.red()) / 4, (colour.green() + 3 * back.green()) / 4, (colour.blue() + 3 * back.blue()) / 4);
        }
        colourOf_.push_back(colour.rgba());
        if (b.site >= 0) siteBytes[static_cast<std::size_t>(b.site)] += b.size;
    }
    legend_.clear();
    for (std::size_t s = 0; s < siteBytes.size(); ++s) {
        if (siteBytes[s] > 0) legend_.push_back(static_cast<int>(s));
    }
    std::stable_sort(legend_.begin(), legend_.end(), [&](int a, int b) {
        return siteBytes[static_cast<std::size_t>(a)] > siteBytes[static_cast<std::size_t>(b)];
    });
}

void AllocationsPlot::assignColours() {
    // Each site prefers the colour its label hashes to, so a site keeps its colour across runs,
    // zooms and Detail settings; the sites with the most bytes choose first, and one whose colour
    // is taken takes the next free one, so the largest call sites never share a colour.
    siteColour_.assign(data_.sites.size(), 0);
    std::vector<int> order(data_.sites.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    std::stable_sort(order.begin(), order.end(), [this](int a, int b) {
        return data_.sites[static_cast<std::size_t>(a)].bytes > data_.sites[static_cast<std::size_t>(b)].bytes;
    });
    std::array<bool, kSiteColourCount> taken{};
    int free = kSiteColourCount;
    for (const int site : order) {
        int colour = static_cast<int>(qHash(data_.sites[static_cast<std::size_t>(site)].label, 0u) % kSiteColourCount);
        if (free > 0) {
            while (taken[static_cast<std::size_t>(colour)]) colour = (colour + 1) % kSiteColourCount;
            taken[static_cast<std::size_t>(colour)] = true;
            --free;
        }
        siteColour_[static_cast<std::size_t>(site)] = colour;
    }
}

QColor AllocationsPlot::siteColor(int site) const {
    if (site < 0 || site >= static_cast<int>(siteColour_.size())) {
        return palette_.theme == Theme::Dark ? QColor(0x6b, 0x6b, 0x6b) : QColor(0xb8, 0xb8, 0xb8);
    }
    return QColor::fromRgba(kSiteColours[siteColour_[static_cast<std::size_t>(site)]]);
}

void AllocationsPlot::setHighlight(const SearchHighlight& highlight) {
    highlight_ = highlight;
    rebuildDrawn();
    invalidate();
}

bool AllocationsPlot::bandMatches(int band) const {
    if (!highlight_.active() || band < 0 || band >= static_cast<int>(data_.bands.size())) return false;
    const AllocationBandView& b = data_.bands[static_cast<std::size_t>(band)];
    return highlight_.matches(b.address, b.size, b.stackId);
}

void AllocationsPlot::setCurrentEvent(qint64 event) {
    if (event == currentEvent_) return;
    currentEvent_ = event;
    update();  // the cursor is drawn over the cached image
}

void AllocationsPlot::setWindow(double first, double last) {
    const double total = std::max<double>(1.0, static_cast<double>(data_.eventCount));
    double span = std::clamp(last - first, std::min(kMinEvents, total), total);
    first = std::clamp(first, 0.0, total - span);
    x0_ = first;
    x1_ = first + span;
    if (autoBytes_) fitBytes();
    invalidate();
    emit windowChanged();
}

void AllocationsPlot::zoomTime(double factor, double aroundEvent) {
    const double first = aroundEvent - (aroundEvent - x0_) * factor;
    const double last = aroundEvent + (x1_ - aroundEvent) * factor;
    setWindow(first, last);
}

void AllocationsPlot::zoomBytes(double factor, double aroundBytes) {
    autoBytes_ = false;
    double low = aroundBytes - (aroundBytes - y0_) * factor;
    double high = aroundBytes + (y1_ - aroundBytes) * factor;
    low = std::max(0.0, low);
    if (high - low < 1024.0) high = low + 1024.0;
    y0_ = low;
    y1_ = high;
    invalidate();
}

void AllocationsPlot::resetZoom() {
    autoBytes_ = true;
    setWindow(0, static_cast<double>(data_.eventCount));
}

void AllocationsPlot::fitBytes() {
    // The stack's top is at least the allocated bytes and at most what the drawn bands reach.
    const QRect plot = plotRect();
    const int width = std::max(1, plot.width());
    qint64 top = 1;
    for (int x = 0; x < width; x += std::max(1, width / 256)) {
        const Column c = columnAt(x, width);
        qint64 sum = c.smaller;
        for (const int i : c.bands) sum += sizeOf_[static_cast<std::size_t>(i)];
        top = std::max(top, sum);
    }
    y0_ = 0;
    y1_ = static_cast<double>(top) * 1.05;
}

QRect AllocationsPlot::plotRect() const {
    return QRect(kLeftMargin, kTopMargin, std::max(1, width() - kLeftMargin - kRightMargin),
                 std::max(1, height() - kTopMargin - kBottomMargin));
}

double AllocationsPlot::xForEvent(double event) const {
    const QRect plot = plotRect();
    return plot.left() + (event - x0_) / (x1_ - x0_) * plot.width();
}

double AllocationsPlot::eventAtX(double x) const {
    const QRect plot = plotRect();
    return x0_ + (x - plot.left()) / std::max(1, plot.width()) * (x1_ - x0_);
}

double AllocationsPlot::bytesAtY(double y) const {
    const QRect plot = plotRect();
    return y0_ + (plot.bottom() + 1 - y) / std::max(1, plot.height()) * (y1_ - y0_);
}

qint64 AllocationsPlot::envelope(qint64 first, qint64 last) const {
    if (data_.allocatedMax.empty() || last <= first) return 0;
    const qint64 step = std::max<qint64>(1, data_.bucketEvents);
    const qint64 count = static_cast<qint64>(data_.allocatedMax.size());
    const qint64 a = std::clamp<qint64>(first / step, 0, count - 1);
    const qint64 b = std::clamp<qint64>((last - 1) / step, 0, count - 1);
    qint64 most = 0;
    for (qint64 k = a; k <= b; ++k) most = std::max(most, data_.allocatedMax[static_cast<std::size_t>(k)]);
    return most;
}

AllocationsPlot::Column AllocationsPlot::columnAt(int x, int width) const {
    // The events the column covers: at least one, so a zoomed-in column is one event.
    const double span = (x1_ - x0_) / width;
    const auto first = static_cast<qint64>(std::floor(x0_ + span * x));
    const auto last = std::max(first + 1, static_cast<qint64>(std::ceil(x0_ + span * (x + 1))));
    Column c;
    qint64 drawnBytes = 0;
    for (std::size_t i = 0; i < allocOf_.size(); ++i) {
        if (allocOf_[i] < last && freeOf_[i] > first) {
            c.bands.push_back(static_cast<int>(i));
            drawnBytes += sizeOf_[i];
        }
    }
    c.smaller = std::max<qint64>(0, envelope(first, last) - drawnBytes);
    return c;
}

void AllocationsPlot::render() {
    const QRect plot = plotRect();
    image_ = QImage(plot.size(), QImage::Format_ARGB32_Premultiplied);
    image_.fill(palette_.background);
    dirty_ = false;
    if (data_.eventCount == 0) return;
    const int w = image_.width(), h = image_.height();
    const double scale = h / std::max(1.0, y1_ - y0_);
    const auto row = [&](double bytes) { return std::clamp(static_cast<int>(std::lround(h - (bytes - y0_) * scale)), 0, h); };
    const QRgb smaller = siteColor(-1).rgba();
    for (int x = 0; x < w; ++x) {
        const Column c = columnAt(x, w);
        double cum = 0;
        const auto fill = [&](double bytes, QRgb colour) {
            const int bottom = row(cum), top = row(cum + bytes);
            for (int r = top; r < bottom; ++r) reinterpret_cast<QRgb*>(image_.scanLine(r))[x] = colour;
            cum += bytes;
        };
        fill(static_cast<double>(c.smaller), smaller);
        for (const int i : c.bands) fill(static_cast<double>(sizeOf_[static_cast<std::size_t>(i)]), colourOf_[static_cast<std::size_t>(i)]);
    }
}

void AllocationsPlot::invalidate() {
    dirty_ = true;
    update();
}

void AllocationsPlot::drawAxes(QPainter& p, const QRect& plot) const {
    p.setPen(palette_.mutedText);
    const QFontMetrics fm = p.fontMetrics();
    // Ticks at round binary sizes (0, 512 MiB, 1 GiB...), not round decimal byte counts.
    double unit = 1.0;
    while (unit * 1024.0 <= y1_) unit *= 1024.0;
    std::vector<double> byteTicks;
    for (const double t : NiceTicks::ticks(y0_ / unit, y1_ / unit, std::max(2, plot.height() / 40))) byteTicks.push_back(t * unit);
    for (const double v : byteTicks) {
        const int y = plot.bottom() + 1 - static_cast<int>((v - y0_) / (y1_ - y0_) * plot.height());
        p.setPen(palette_.grid);
        p.drawLine(plot.left() - 4, y, plot.left(), y);
        p.setPen(palette_.mutedText);
        p.drawText(QRect(0, y - fm.height() / 2, plot.left() - 6, fm.height()), Qt::AlignRight | Qt::AlignVCenter,
                   Formatting::bytes(static_cast<qint64>(v)));
    }
    for (const double v : NiceTicks::ticks(x0_, x1_, std::max(2, plot.width() / 110))) {
        const int x = static_cast<int>(xForEvent(v));
        p.setPen(palette_.grid);
        p.drawLine(x, plot.bottom() + 1, x, plot.bottom() + 4);
        p.setPen(palette_.mutedText);
        p.drawText(QRect(x - 60, plot.bottom() + 4, 120, fm.height()), Qt::AlignHCenter | Qt::AlignTop,
                   Formatting::count(static_cast<qint64>(v)));
    }
}

void AllocationsPlot::drawLegend(QPainter& p, const QRect& plot) const {
    if (data_.eventCount == 0) return;
    const QFontMetrics fm = p.fontMetrics();
    QStringList labels;
    std::vector<QColor> colours;
    const int shown = std::min<int>(8, static_cast<int>(legend_.size()));
    for (int i = 0; i < shown; ++i) {
        labels << fm.elidedText(data_.sites[static_cast<std::size_t>(legend_[static_cast<std::size_t>(i)])].label, Qt::ElideMiddle, 320);
        colours.push_back(siteColor(legend_[static_cast<std::size_t>(i)]));
    }
    if (!data_.anyStack) {
        labels << tr("no stack recorded");
        colours.push_back(siteColor(-1));
    }
    labels << tr("smaller allocations");
    colours.push_back(siteColor(-1));
    int textWidth = 0;
    for (const QString& l : labels) textWidth = std::max(textWidth, fm.horizontalAdvance(l));
    const int line = fm.height() + 2;
    const QRect box(plot.right() - textWidth - 34, plot.top() + 6, textWidth + 28, line * static_cast<int>(labels.size()) + 8);
    if (box.width() > plot.width() / 2 || box.height() > plot.height() - 12) return;  // too small a window for it
    QColor back = palette_.background;
    back.setAlpha(215);
    p.setPen(palette_.grid);
    p.setBrush(back);
    p.drawRect(box);
    for (int i = 0; i < labels.size(); ++i) {
        const int y = box.top() + 4 + i * line;
        p.fillRect(QRect(box.left() + 6, y + 3, 12, line - 6), colours[static_cast<std::size_t>(i)]);
        p.setPen(palette_.text);
        p.drawText(QRect(box.left() + 22, y, textWidth + 4, line), Qt::AlignLeft | Qt::AlignVCenter, labels[i]);
    }
}

void AllocationsPlot::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.fillRect(rect(), palette_.background);
    const QRect plot = plotRect();
    if (data_.eventCount == 0) {
        p.setPen(palette_.mutedText);
        p.drawText(rect(), Qt::AlignCenter, tr("No allocations to show"));
        return;
    }
    if (dirty_ || image_.size() != plot.size()) render();
    p.drawImage(plot.topLeft(), image_);
    drawAxes(p, plot);
    if (selection_) {
        const double a = xForEvent(std::min(selection_->first, selection_->second));
        const double b = xForEvent(std::max(selection_->first, selection_->second));
        QColor shade = palette_.selection;
        shade.setAlpha(60);
        p.fillRect(QRectF(a, plot.top(), std::max(1.0, b - a), plot.height()), shade);
        p.setPen(palette_.text);
        p.drawText(QRectF(a + 4, plot.top() + 4, 240, 20), Qt::AlignLeft | Qt::AlignTop,
                   tr("%1 events").arg(Formatting::count(static_cast<qint64>(std::abs(selection_->second - selection_->first)))));
    }
    if (currentEvent_ >= 0 && currentEvent_ >= x0_ && currentEvent_ <= x1_) {
        const double x = xForEvent(static_cast<double>(currentEvent_) + 0.5);
        p.setPen(QPen(palette_.cursor, 2));
        p.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()));
    }
    drawLegend(p, plot);
}

void AllocationsPlot::resizeEvent(QResizeEvent*) {
    if (autoBytes_) fitBytes();
    invalidate();
}

void AllocationsPlot::changeEvent(QEvent* event) {
    if (event->type() == QEvent::PaletteChange) {
        palette_ = ThemePalette::forPalette(palette());
        rebuildDrawn();
        invalidate();
    }
    QWidget::changeEvent(event);
}

AllocationsPlot::Hit AllocationsPlot::hitAt(const QPoint& pos) const {
    Hit hit;
    const QRect plot = plotRect();
    if (!plot.contains(pos) || data_.eventCount == 0) return hit;
    const int x = pos.x() - plot.left();
    const Column c = columnAt(x, plot.width());
    hit.event = std::clamp<qint64>(static_cast<qint64>(eventAtX(pos.x() + 0.5)), 0, data_.eventCount - 1);
    const double bytes = bytesAtY(pos.y() + 0.5);
    double cum = static_cast<double>(c.smaller);
    if (bytes < cum) {
        hit.kind = Hit::Kind::Smaller;
        hit.smallerBytes = c.smaller;
        return hit;
    }
    for (const int i : c.bands) {
        cum += static_cast<double>(sizeOf_[static_cast<std::size_t>(i)]);
        if (bytes < cum) {
            hit.kind = Hit::Kind::Band;
            hit.band = drawn_[static_cast<std::size_t>(i)];
            const AllocationBandView& b = data_.bands[static_cast<std::size_t>(hit.band)];
            hit.event = std::clamp<qint64>(hit.event, b.allocEvent, std::max(b.allocEvent, b.freeEvent - 1));
            return hit;
        }
    }
    return hit;
}

QString AllocationsPlot::describe(const Hit& hit) const {
    if (hit.kind == Hit::Kind::Smaller) {
        return tr("<b>Smaller allocations</b><br>%1 allocated in allocations smaller than the %2 drawn one by one "
                  "(raise Detail to draw more)")
            .arg(Formatting::bytes(hit.smallerBytes))
            .arg(drawnCount());
    }
    if (hit.kind != Hit::Kind::Band) return {};
    const AllocationBandView& b = data_.bands[static_cast<std::size_t>(hit.band)];
    QString text = tr("<b>%1</b> (requested %2) at %3<br>stream %4 · %5")
                       .arg(Formatting::bytes(b.size), Formatting::bytes(b.requested), Formatting::address(b.address))
                       .arg(b.stream)
                       .arg(b.pool.toHtmlEscaped());
    if (!b.phase.isEmpty()) text += tr(" · phase %1").arg(b.phase.toHtmlEscaped());
    text += tr("<br>allocated at event %1, ").arg(Formatting::count(b.allocEvent));
    text += b.liveAtEnd ? tr("still live at the end of the run") : tr("freed at event %1").arg(Formatting::count(b.freeEvent));
    if (b.site < 0) {
        text += tr("<br><i>no stack recorded</i> (the recording has no frames for it: stacks were off, or the "
                   "allocation came from C++ without Python frames)");
    } else {
        const AllocationSite& site = data_.sites[static_cast<std::size_t>(b.site)];
        text += tr("<br>call site: %1").arg(site.label.toHtmlEscaped());
        const int shown = std::min<int>(5, static_cast<int>(site.frames.size()));
        for (int i = 0; i < shown; ++i) text += QStringLiteral("<br>&nbsp;&nbsp;") + site.frames[i].toHtmlEscaped();
        if (site.frames.size() > shown) text += tr("<br>&nbsp;&nbsp;… %1 more frames").arg(site.frames.size() - shown);
    }
    return text;
}

bool AllocationsPlot::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const QString text = describe(hitAt(help->pos()));
        if (text.isEmpty()) QToolTip::hideText();
        else QToolTip::showText(help->globalPos(), text, this);
        return true;
    }
    return QWidget::event(event);
}

void AllocationsPlot::wheelEvent(QWheelEvent* event) {
    const double steps = event->angleDelta().y() / 120.0;
    if (steps == 0) return;
    const double factor = std::pow(0.8, steps);
    if (event->modifiers() & Qt::ControlModifier) {
        zoomBytes(factor, bytesAtY(event->position().y()));
    } else {
        zoomTime(factor, eventAtX(event->position().x()));
    }
    event->accept();
}

void AllocationsPlot::mousePressEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton) return;
    pressed_ = true;
    panning_ = false;
    selecting_ = (event->modifiers() & Qt::ShiftModifier) != 0;
    pressPos_ = event->pos();
    pressX0_ = x0_;
    pressX1_ = x1_;
    pressY0_ = y0_;
    pressY1_ = y1_;
    if (selecting_) selection_ = std::make_pair(eventAtX(event->pos().x()), eventAtX(event->pos().x()));
}

void AllocationsPlot::mouseMoveEvent(QMouseEvent* event) {
    if (!pressed_) return;
    if (selecting_) {
        selection_->second = std::clamp(eventAtX(event->pos().x()), 0.0, static_cast<double>(data_.eventCount));
        update();
        return;
    }
    const QPoint delta = event->pos() - pressPos_;
    if (!panning_ && delta.manhattanLength() < 4) return;
    panning_ = true;
    const QRect plot = plotRect();
    const double dx = delta.x() * (pressX1_ - pressX0_) / std::max(1, plot.width());
    if (!autoBytes_) {
        const double dy = delta.y() * (pressY1_ - pressY0_) / std::max(1, plot.height());
        const double low = std::max(0.0, pressY0_ + dy);
        y1_ = low + (pressY1_ - pressY0_);
        y0_ = low;
    }
    setWindow(pressX0_ - dx, pressX1_ - dx);
}

void AllocationsPlot::mouseReleaseEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton || !pressed_) return;
    pressed_ = false;
    if (selecting_) {
        selecting_ = false;
        const double a = std::min(selection_->first, selection_->second);
        const double b = std::max(selection_->first, selection_->second);
        selection_.reset();
        if (b - a >= 2) setWindow(a, b);
        else update();
        return;
    }
    if (panning_) return;
    const Hit hit = hitAt(event->pos());
    if (hit.kind == Hit::Kind::Band) {
        emit blockRequested(data_.bands[static_cast<std::size_t>(hit.band)].address, hit.event);
    } else if (plotRect().contains(event->pos()) && data_.eventCount > 0) {
        emit eventRequested(hit.event);
    }
}

void AllocationsPlot::mouseDoubleClickEvent(QMouseEvent*) { resetZoom(); }

void AllocationsPlot::keyPressEvent(QKeyEvent* event) {
    const double middle = (x0_ + x1_) / 2;
    const double span = x1_ - x0_;
    switch (event->key()) {
        case Qt::Key_Plus:
        case Qt::Key_Equal: zoomTime(0.5, middle); break;
        case Qt::Key_Minus: zoomTime(2.0, middle); break;
        case Qt::Key_Left: setWindow(x0_ - span / 4, x1_ - span / 4); break;
        case Qt::Key_Right: setWindow(x0_ + span / 4, x1_ + span / 4); break;
        case Qt::Key_Home: resetZoom(); break;
        default: QWidget::keyPressEvent(event); return;
    }
    event->accept();
}

}  // namespace allocscope::views
