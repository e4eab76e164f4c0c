#pragma once
// Editor for roundup_power2_divisions: off, one value for every size, or one value per size
// interval (< 2 MiB, [2, 4) MiB, ..., >= 32 GiB), each a power of two. The value is 16 ints.
#include <QVariantList>
#include <QWidget>

#include <array>

class QComboBox;
class QWidget;

namespace allocscope::views {

class RoundupDivisionsEditor : public QWidget {
    Q_OBJECT
public:
    static constexpr int kIntervals = 16;
    enum class Mode { Off = 0, Uniform = 1, PerInterval = 2 };

    explicit RoundupDivisionsEditor(QWidget* parent = nullptr);

    QVariantList value() const;
    void setValue(const QVariantList& divisions);  // 16 ints (missing entries are 0)
    Mode mode() const;
    void setMode(Mode mode);
    static QString intervalName(int index);  // "< 2 MiB", "2 MiB", ..., ">= 32 GiB"
    QComboBox* intervalBox(int index) const { return intervals_[static_cast<std::size_t>(index)]; }
    QComboBox* uniformBox() const { return uniform_; }
    QComboBox* modeBox() const { return mode_; }

signals:
    void valueChanged(const QVariantList& divisions);

private:
    void updateVisibility();
    void emitChanged();
    QComboBox* makeValueBox(bool allowOff);
    QComboBox* mode_;
    QComboBox* uniform_;
    QWidget* grid_;
    std::array<QComboBox*, kIntervals> intervals_{};
    bool updating_ = false;
};

}  // namespace allocscope::views
