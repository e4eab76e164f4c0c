#include "views/widgets/ParamFormWidget.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSpinBox>

#include <limits>

namespace allocscope::views {

ParamFormWidget::ParamFormWidget(QWidget* parent) : QWidget(parent), layout_(new QFormLayout(this)) {
    layout_->setFieldGrowthPolicy(QFormLayout::ExpandingFieldsGrow);
    layout_->setRowWrapPolicy(QFormLayout::WrapLongRows);
}

void ParamFormWidget::setSpecs(std::vector<ParamSpec> specs) {
    while (layout_->rowCount() > 0) layout_->removeRow(0);  // deletes the widgets
    editors_.clear();
    specs_ = std::move(specs);
    for (const ParamSpec& spec : specs_) {
        QWidget* editor = nullptr;
        switch (spec.kind) {
            case ParamKind::Int: {
                auto* box = new QSpinBox(this);
                const double lo = std::max<double>(spec.minimum, std::numeric_limits<int>::min());
                const double hi = std::min<double>(spec.maximum, std::numeric_limits<int>::max());
                box->setRange(static_cast<int>(lo), static_cast<int>(hi));
                box->setSingleStep(std::max(1, static_cast<int>(spec.step)));
                box->setSuffix(spec.suffix);
                box->setAccelerated(true);
                connect(box, &QSpinBox::valueChanged, this, &ParamFormWidget::valuesChanged);
                editor = box;
                break;
            }
            case ParamKind::Double: {
                auto* box = new QDoubleSpinBox(this);
                box->setDecimals(spec.decimals);
                box->setRange(spec.minimum, spec.maximum);
                box->setSingleStep(spec.step);
                box->setSuffix(spec.suffix);
                connect(box, &QDoubleSpinBox::valueChanged, this, &ParamFormWidget::valuesChanged);
                editor = box;
                break;
            }
            case ParamKind::Bool: {
                auto* box = new QCheckBox(this);
                connect(box, &QCheckBox::toggled, this, &ParamFormWidget::valuesChanged);
                editor = box;
                break;
            }
            case ParamKind::Choice: {
                auto* box = new QComboBox(this);
                box->addItems(spec.choices);
                connect(box, &QComboBox::currentIndexChanged, this, &ParamFormWidget::valuesChanged);
                editor = box;
                break;
            }
        }
        QString tip = spec.help;
        if (spec.kind == ParamKind::Int || spec.kind == ParamKind::Double)
            tip += (tip.isEmpty() ? QString() : QStringLiteral("\n")) +
                   tr("Range %1 – %2%3").arg(spec.minimum).arg(spec.maximum).arg(spec.suffix);
        editor->setToolTip(tip);
        editor->setObjectName(spec.key);
        auto* label = new QLabel(spec.label.isEmpty() ? spec.key : spec.label, this);
        label->setToolTip(tip);
        label->setBuddy(editor);
        layout_->addRow(label, editor);
        editors_[spec.key] = editor;
        setEditorValue(spec, spec.defaultValue);
    }
}

QWidget* ParamFormWidget::editor(const QString& key) const {
    const auto it = editors_.find(key);
    return it == editors_.end() ? nullptr : it->second;
}

void ParamFormWidget::setEditorValue(const ParamSpec& spec, const QVariant& value) {
    QWidget* w = editor(spec.key);
    const QSignalBlocker block(w);
    switch (spec.kind) {
        case ParamKind::Int: static_cast<QSpinBox*>(w)->setValue(static_cast<int>(value.toLongLong())); break;
        case ParamKind::Double: static_cast<QDoubleSpinBox*>(w)->setValue(value.toDouble()); break;
        case ParamKind::Bool: static_cast<QCheckBox*>(w)->setChecked(value.toBool()); break;
        case ParamKind::Choice: {
            auto* box = static_cast<QComboBox*>(w);
            const int index = box->findText(value.toString());
            box->setCurrentIndex(index >= 0 ? index : 0);
            break;
        }
    }
}

ParamValues ParamFormWidget::values() const {
    ParamValues out;
    for (const ParamSpec& spec : specs_) {
        QWidget* w = editor(spec.key);
        switch (spec.kind) {
            case ParamKind::Int: out.insert(spec.key, static_cast<qlonglong>(static_cast<QSpinBox*>(w)->value())); break;
            case ParamKind::Double: out.insert(spec.key, static_cast<QDoubleSpinBox*>(w)->value()); break;
            case ParamKind::Bool: out.insert(spec.key, static_cast<QCheckBox*>(w)->isChecked()); break;
            case ParamKind::Choice: out.insert(spec.key, static_cast<QComboBox*>(w)->currentText()); break;
        }
    }
    return out;
}

void ParamFormWidget::setValues(const ParamValues& input) {
    for (const ParamSpec& spec : specs_)
        if (input.contains(spec.key)) setEditorValue(spec, input.value(spec.key));
    emit valuesChanged();
}

void ParamFormWidget::resetToDefaults() {
    for (const ParamSpec& spec : specs_) setEditorValue(spec, spec.defaultValue);
    emit valuesChanged();
}

}  // namespace allocscope::views
