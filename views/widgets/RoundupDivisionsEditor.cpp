#include "views/widgets/RoundupDivisionsEditor.h"

#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QVBoxLayout>

namespace allocscope::views {

namespace {
constexpr int kChoices[] = {0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};

void setBoxValue(QComboBox* box, int value) {
    int index = box->findData(value);
    if (index < 0) {
        // A value the list lacks (not a power of two): show it anyway so nothing is lost.
        box->addItem(QString::number(value), value);
        index = box->count() - 1;
    }
    box->setCurrentIndex(index);
}
}  // namespace

RoundupDivisionsEditor::RoundupDivisionsEditor(QWidget* parent) : QWidget(parent), mode_(new QComboBox(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* top = new QHBoxLayout();
    top->setContentsMargins(0, 0, 0, 0);
    mode_->addItem(tr("off"));
    mode_->addItem(tr("same for all sizes"));
    mode_->addItem(tr("per size interval"));
    mode_->setToolTip(tr("off: no power-of-two rounding (the default).\n"
                         "same for all sizes: the single-value form, roundup_power2_divisions:N.\n"
                         "per size interval: the list form, [K1:V1,...,>:Vn]."));
    uniform_ = makeValueBox(false);
    uniform_->setToolTip(tr("Number of steps between two powers of two, for every request size"));
    top->addWidget(mode_);
    top->addWidget(uniform_);
    top->addStretch(1);
    layout->addLayout(top);

    grid_ = new QWidget(this);
    auto* grid = new QGridLayout(grid_);
    grid->setContentsMargins(0, 0, 0, 0);
    grid->setHorizontalSpacing(6);
    grid->setVerticalSpacing(2);
    for (int i = 0; i < kIntervals; ++i) {
        auto* label = new QLabel(intervalName(i), grid_);
        auto* box = makeValueBox(true);
        const QString tip = i == 0    ? tr("Requests below 2 MiB")
                            : i == 15 ? tr("Requests of 32 GiB and more")
                                      : tr("Requests in [%1, %2)").arg(intervalName(i), intervalName(i + 1));
        label->setToolTip(tip);
        box->setToolTip(tip + tr(": steps between two powers of two (off = no rounding)"));
        label->setBuddy(box);
        grid->addWidget(label, (i / 4) * 2, i % 4);
        grid->addWidget(box, (i / 4) * 2 + 1, i % 4);
        intervals_[static_cast<std::size_t>(i)] = box;
        connect(box, &QComboBox::currentIndexChanged, this, &RoundupDivisionsEditor::emitChanged);
    }
    layout->addWidget(grid_);
    connect(mode_, &QComboBox::currentIndexChanged, this, [this] {
        updateVisibility();
        emitChanged();
    });
    connect(uniform_, &QComboBox::currentIndexChanged, this, &RoundupDivisionsEditor::emitChanged);
    setValue({});
}

QComboBox* RoundupDivisionsEditor::makeValueBox(bool allowOff) {
    auto* box = new QComboBox(this);
    for (int v : kChoices) {
        if (v == 0 && !allowOff) continue;
        box->addItem(v == 0 ? tr("off") : QString::number(v), v);
    }
    if (!allowOff) box->setCurrentIndex(box->findData(4));
    return box;
}

QString RoundupDivisionsEditor::intervalName(int index) {
    if (index <= 0) return tr("< 2 MiB");
    if (index >= 15) return tr("≥ 32 GiB");
    const int mib = 1 << index;
    return mib >= 1024 ? tr("%1 GiB").arg(mib / 1024) : tr("%1 MiB").arg(mib);
}

RoundupDivisionsEditor::Mode RoundupDivisionsEditor::mode() const { return static_cast<Mode>(mode_->currentIndex()); }

void RoundupDivisionsEditor::setMode(Mode mode) { mode_->setCurrentIndex(static_cast<int>(mode)); }

QVariantList RoundupDivisionsEditor::value() const {
    QVariantList out;
    for (int i = 0; i < kIntervals; ++i) {
        switch (mode()) {
            case Mode::Off: out.push_back(0); break;
            case Mode::Uniform: out.push_back(uniform_->currentData().toInt()); break;
            case Mode::PerInterval: out.push_back(intervals_[static_cast<std::size_t>(i)]->currentData().toInt()); break;
        }
    }
    return out;
}

void RoundupDivisionsEditor::setValue(const QVariantList& divisions) {
    updating_ = true;
    std::array<int, kIntervals> v{};
    for (int i = 0; i < kIntervals && i < divisions.size(); ++i) v[static_cast<std::size_t>(i)] = divisions[i].toInt();
    const bool allZero = std::all_of(v.begin(), v.end(), [](int x) { return x == 0; });
    const bool allSame = std::all_of(v.begin(), v.end(), [&](int x) { return x == v[0]; });
    {
        const QSignalBlocker blockMode(mode_);
        mode_->setCurrentIndex(static_cast<int>(allZero ? Mode::Off : (allSame ? Mode::Uniform : Mode::PerInterval)));
    }
    if (allSame && !allZero) {
        const QSignalBlocker block(uniform_);
        setBoxValue(uniform_, v[0]);
    }
    for (int i = 0; i < kIntervals; ++i) {
        const QSignalBlocker block(intervals_[static_cast<std::size_t>(i)]);
        setBoxValue(intervals_[static_cast<std::size_t>(i)], v[static_cast<std::size_t>(i)]);
    }
    updateVisibility();
    updating_ = false;
}

void RoundupDivisionsEditor::updateVisibility() {
    uniform_->setVisible(mode() == Mode::Uniform);
    grid_->setVisible(mode() == Mode::PerInterval);
    if (mode() == Mode::PerInterval && !updating_) {
        // Switching to the list form starts from what the uniform form showed.
        bool allOff = true;
        for (QComboBox* box : intervals_) allOff = allOff && box->currentData().toInt() == 0;
        if (allOff)
            for (QComboBox* box : intervals_) {
                const QSignalBlocker block(box);
                setBoxValue(box, uniform_->currentData().toInt());
            }
    }
}

void RoundupDivisionsEditor::emitChanged() {
    if (!updating_) emit valueChanged(value());
}

}  // namespace allocscope::views
