#pragma once
// A form built from a list of ParamSpec (a workload's parameters): spin boxes, check boxes and
// combo boxes with the spec's range, default and help text as tooltip.
#include <QWidget>

#include <map>

#include "views/data/FormSpecs.h"

class QFormLayout;

namespace allocscope::views {

class ParamFormWidget : public QWidget {
    Q_OBJECT
public:
    explicit ParamFormWidget(QWidget* parent = nullptr);

    void setSpecs(std::vector<ParamSpec> specs);  // rebuilds the form with the defaults
    const std::vector<ParamSpec>& specs() const { return specs_; }
    // key -> qlonglong (Int), double (Double), bool (Bool), QString (Choice).
    ParamValues values() const;
    QWidget* editor(const QString& key) const;

public slots:
    void setValues(const ParamValues& values);  // keys not given keep their current value
    void resetToDefaults();

signals:
    void valuesChanged();

private:
    void setEditorValue(const ParamSpec& spec, const QVariant& value);
    std::vector<ParamSpec> specs_;
    std::map<QString, QWidget*> editors_;
    QFormLayout* layout_;
};

}  // namespace allocscope::views
