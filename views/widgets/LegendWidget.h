#pragma once
// A legend: one colour swatch and label per entry, laid out left to right and wrapped to the
// widget's width. Painted with QPainter; colours come from the caller (a per-theme table).
#include <QColor>
#include <QString>
#include <QVector>
#include <QWidget>

namespace allocscope::views {

struct LegendEntry {
    QString label;
    QColor color;
    QString toolTip;
};

class LegendWidget : public QWidget {
    Q_OBJECT
public:
    explicit LegendWidget(QWidget* parent = nullptr);
    void setEntries(const QVector<LegendEntry>& entries);
    const QVector<LegendEntry>& entries() const { return entries_; }
    // The swatch rectangle of entry `index` in widget coordinates (for tests and tooltips).
    QRect swatchRect(int index) const;
    QSize sizeHint() const override;
    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override;

protected:
    void paintEvent(QPaintEvent* event) override;
    bool event(QEvent* event) override;

private:
    QVector<QRect> layoutSwatches(int width) const;
    QVector<LegendEntry> entries_;
};

}  // namespace allocscope::views
